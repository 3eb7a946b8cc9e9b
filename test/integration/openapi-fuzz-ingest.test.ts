// Schema-driven fuzz of the ingestion operations of /openapi.json (spec 2; issue 14's class of
// hostile input) with schemathesis, against one real datasource and its token: no 5xx, and no
// disagreement between a response and the document (status, content type, headers, body).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createIngestTenant, eventually } from '../support/ingest';
import { api, stack } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const SCHEMATHESIS = join(ROOT, '.tools', 'py', 'bin', 'schemathesis');
const SEED = '2';
const MAX_EXAMPLES = '25';
const CHECKS = [
  'not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'response_schema_conformance',
  'negative_data_rejection', 'missing_required_header', 'ignored_auth', 'unsupported_method',
].join(',');

const run = promisify(execFile);

describe('spec 2 §4, §7: schemathesis over the ingestion operations of /openapi.json', () => {
  test(`every ingestion operation on a real datasource, seed ${SEED}, at most ${MAX_EXAMPLES} cases each`, async () => {
    if (!existsSync(SCHEMATHESIS)) throw new Error('schemathesis is not installed in .tools/py: run `npm run bootstrap -- --fuzzer` (npm test does it)');
    expect(execFileSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' })).toMatch(/schemathesis/i);
    const t = await createIngestTenant();
    const dir = mkdtempSync(join(tmpdir(), 'openapi-fuzz-ingest-'));
    const doc = await fetch(`${stack().httpUrl}/openapi.json`).then((r) => r.text());
    writeFileSync(join(dir, 'openapi.json'), doc);
    const args = [
      '--config-file', join(ROOT, 'test', 'support', 'schemathesis-ingest.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/ingest/v1`,
      '-H', `Authorization: Bearer ${t.token}`, '--include-tag', 'ingestion',
      '--seed', SEED, '--max-examples', MAX_EXAMPLES, '--workers', '1', '--generation-with-security-parameters', 'false',
      '--phases', 'examples,coverage,fuzzing', '--checks', CHECKS, '--request-timeout', '10', '--no-color', '--output-truncate', 'true', '--suppress-health-check', 'all',
    ];
    const outcome = await run(SCHEMATHESIS, args, {
      cwd: dir, timeout: 270_000, maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1', INGEST_FUZZ_PROJECT: t.projectId, INGEST_FUZZ_DATASOURCE: t.datasourceId },
    })
      .then(({ stdout }) => ({ code: 0, output: stdout }))
      .catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, output: `${err.stdout ?? ''}\n${err.stderr ?? ''}` }));
    if (outcome.code !== 0) process.stderr.write(outcome.output);
    expect({ exitCode: outcome.code, summary: outcome.output.split('\n').filter((l) => /FAILURES|passed|failed|error/i.test(l)).slice(-20) }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    const operations = Object.values((JSON.parse(doc) as { paths: Record<string, Record<string, { tags?: string[] }>> }).paths)
      .reduce((n, item) => n + Object.values(item).filter((op) => op.tags?.includes('ingestion')).length, 0);
    expect(operations).toBe(7);
    expect(/Tested:\s+(\d+)/.exec(outcome.output)?.[1]).toBe(String(operations));
    // The fuzz reached the datasource (the path parameters are fixed by the config): its usage counted requests.
    type Usage = { usage: { lastDay: Record<'contacts' | 'events', { requests: number; accepted: number }> } };
    const usage = await eventually(
      async () => (await api(t.base, { token: t.token })).body as Usage,
      (u) => u.usage.lastDay.contacts.requests > 0 && u.usage.lastDay.events.requests > 0,
    );
    expect(usage.usage.lastDay.contacts.requests).toBeGreaterThan(0);
    expect(usage.usage.lastDay.events.requests).toBeGreaterThan(0);
  }, 300_000);
});
