// Schema-driven fuzz of the ingestion operations of /openapi.json (spec 2; issue 14's class of
// hostile input) with schemathesis, against one real datasource and its token: no 5xx, and no
// disagreement between a response and the document (status, content type, headers, body).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../support/eventually';
import { createIngestTenant } from '../support/ingest';
import { FUZZ_CHECKS, FUZZ_COMMON_ARGS, SCHEMATHESIS_CONFIG, runSchemathesis } from '../support/schemathesis';
import { api, stack } from '../../support/stack';

const SEED = '2';
const MAX_EXAMPLES = '25';
// Allow is checked by the SMS suite for every route (the guard is shared).
const CHECKS = FUZZ_CHECKS.filter((c) => c !== 'allow_header_conformance').join(',');

describe('spec 2 §4, §7: schemathesis over the ingestion operations of /openapi.json', () => {
  test(`every ingestion operation on a real datasource, seed ${SEED}, at most ${MAX_EXAMPLES} cases each`, async () => {
    const t = await createIngestTenant();
    const dir = mkdtempSync(join(tmpdir(), 'openapi-fuzz-ingest-'));
    const doc = await fetch(`${stack().httpUrl}/openapi.json`).then((r) => r.text());
    writeFileSync(join(dir, 'openapi.json'), doc);
    const outcome = await runSchemathesis([
      '--config-file', SCHEMATHESIS_CONFIG('schemathesis-ingest.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/ingest/v1`,
      '-H', `Authorization: Bearer ${t.token}`, '--include-tag', 'ingestion', '--seed', SEED, '--max-examples', MAX_EXAMPLES,
      '--phases', 'examples,coverage,fuzzing', '--checks', CHECKS, ...FUZZ_COMMON_ARGS,
    ], { cwd: dir, env: { INGEST_FUZZ_PROJECT: t.projectId, INGEST_FUZZ_DATASOURCE: t.datasourceId } });
    expect({ exitCode: outcome.code, summary: outcome.summary }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    const operations = Object.values((JSON.parse(doc) as { paths: Record<string, Record<string, { tags?: string[] }>> }).paths)
      .reduce((n, item) => n + Object.values(item).filter((op) => op.tags?.includes('ingestion')).length, 0);
    expect(operations).toBe(7);
    expect(outcome.tested).toBe(operations);
    // The fuzz reached the datasource (the path parameters are fixed by the config): its usage counted requests.
    type Usage = { usage: { lastDay: Record<'contacts' | 'events', { requests: number; accepted: number }> } };
    const usage = await eventually(
      async () => (await api(t.base, { token: t.token })).body as Usage,
      { what: "the fuzzed requests in the datasource's usage", until: (u) => u.usage.lastDay.contacts.requests > 0 && u.usage.lastDay.events.requests > 0 },
    );
    expect(usage.usage.lastDay.contacts.requests).toBeGreaterThan(0);
    expect(usage.usage.lastDay.events.requests).toBeGreaterThan(0);
  }, 300_000);
});
