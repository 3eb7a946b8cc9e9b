// Schema-driven fuzz of the opt-out list's operations in the served OpenAPI document (DESIGN §4
// "Two-way"; gateways/http/opt-outs-api.ts), as test/integration/openapi-fuzz.test.ts does for the
// other SMS API operations: schemathesis (pinned, .tools/py; test/support/schemathesis.ts runs
// it), a fixed seed, bounded cases; no 5xx and no disagreement between a response and the document.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FUZZ_CHECKS, FUZZ_COMMON_ARGS, SCHEMATHESIS, SCHEMATHESIS_CONFIG, runSchemathesis } from '../support/schemathesis';
import { stack } from '../../support/stack';
import { createTenant } from '../../support/tenants';

/** Keep in step with scripts/bootstrap.mjs. */
const VERSION = '4.32.5';
const SEED = '14';
const MAX_EXAMPLES = '25';
/** The operations fuzzed, as schemathesis's --include-path-regex and to count them in the document. */
const OPT_OUT_PATHS = '^/opt-outs(/|$)';

describe('DESIGN §4 Two-way: schemathesis over the /opt-outs operations of /openapi.json', () => {
  test(`every opt-out operation, seed ${SEED}, at most ${MAX_EXAMPLES} cases each: no 5xx and no disagreement with the document`, async () => {
    const tenant = await createTenant({ balance: 10 });
    const dir = mkdtempSync(join(tmpdir(), 'openapi-fuzz-'));
    const doc = await fetch(`${stack().httpUrl}/openapi.json`).then((r) => r.text());
    writeFileSync(join(dir, 'openapi.json'), doc);
    const outcome = await runSchemathesis([
      '--config-file', SCHEMATHESIS_CONFIG('schemathesis.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/transactional/v1`, '-H', `Authorization: Bearer ${tenant.token}`,
      '--seed', SEED, '--max-examples', MAX_EXAMPLES, '--include-path-regex', OPT_OUT_PATHS,
      // No stateful phase: the opt-out operations declare no links.
      '--phases', 'examples,coverage,fuzzing', '--checks', FUZZ_CHECKS.join(','), ...FUZZ_COMMON_ARGS,
      '--report', 'ndjson', '--report-dir', dir,
    ], { cwd: dir });
    expect(execFileSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' })).toContain(VERSION);
    expect({ exitCode: outcome.code, summary: outcome.summary }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    // The run covered every documented operation.
    const operations = Object.entries((JSON.parse(doc) as { paths: Record<string, object> }).paths)
      .filter(([path]) => new RegExp(OPT_OUT_PATHS).test(path)).reduce((n, [, ops]) => n + Object.keys(ops).length, 0);
    expect(operations).toBe(3);
    expect(outcome.tested).toBe(operations);
  }, 300_000);
});
