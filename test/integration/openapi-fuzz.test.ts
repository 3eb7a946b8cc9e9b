// Schema-driven fuzz of the served OpenAPI document (issue 14 item 9, spec 1 §9) with a fuzzer
// we did not write: schemathesis from PyPI (pinned, installed into .tools/py by
// scripts/bootstrap.mjs for `npm test`). Every operation, a fixed seed and a bounded number of
// cases, against the running product: no 5xx, and no disagreement between a response and the
// document (status, content type, headers, body schema), nor a schema-invalid request accepted.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stack } from '../../support/stack';
import { createTenant } from '../../support/tenants';

const ROOT = join(__dirname, '..', '..');
const SCHEMATHESIS = join(ROOT, '.tools', 'py', 'bin', 'schemathesis');
/** Keep in step with scripts/bootstrap.mjs. */
const VERSION = '4.32.5';
const SEED = '14';
const MAX_EXAMPLES = '25';
const CHECKS = [
  'not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'response_schema_conformance',
  'negative_data_rejection', 'missing_required_header', 'ignored_auth', 'unsupported_method', 'allow_header_conformance',
].join(',');

const run = promisify(execFile);

describe('spec 1 §9 and issue 14 item 9: schemathesis over /openapi.json', () => {
  test(`every SMS API operation, seed ${SEED}, at most ${MAX_EXAMPLES} cases each: no 5xx and no disagreement with the document`, async () => {
    if (!existsSync(SCHEMATHESIS)) throw new Error(`schemathesis is not installed in .tools/py: run \`npm run bootstrap -- --fuzzer\` (npm test does it)`);
    expect(execFileSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' })).toContain(VERSION);
    // Enough funds that sends are accepted throughout: the fuzz must reach the 201 paths too.
    const tenant = await createTenant({ balance: 100_000 });
    const dir = mkdtempSync(join(tmpdir(), 'openapi-fuzz-'));
    const doc = await fetch(`${stack().httpUrl}/openapi.json`).then((r) => r.text());
    writeFileSync(join(dir, 'openapi.json'), doc);
    const args = [
      '--config-file', join(ROOT, 'test', 'support', 'schemathesis.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/transactional/v1`, '-H', `Authorization: Bearer ${tenant.token}`,
      '--seed', SEED, '--max-examples', MAX_EXAMPLES, '--workers', '1',
      // One credential per request: the document's security alternatives are Bearer OR access_token (both at once is a 401).
      '--generation-with-security-parameters', 'false',
      // The SMS API's operations (spec 1): the ingestion and audience operations of the same
      // document need other token kinds and base paths.
      '--include-path-regex', '^/(sms|lookup|organization)(/|$)',
      '--phases', 'examples,coverage,fuzzing,stateful', '--checks', CHECKS, '--request-timeout', '10', '--no-color', '--output-truncate', 'true',
      '--report', 'ndjson', '--report-dir', dir, '--suppress-health-check', 'all',
    ];
    // About 30 s alone on two cores; more when other suites share them (npm test runs two at once).
    const outcome = await run(SCHEMATHESIS, args, { cwd: dir, timeout: 270_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } })
      .then(({ stdout }) => ({ code: 0, output: stdout }))
      .catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, output: `${err.stdout ?? ''}\n${err.stderr ?? ''}` }));
    if (outcome.code !== 0) process.stderr.write(outcome.output);
    expect({ exitCode: outcome.code, summary: outcome.output.split('\n').filter((l) => /FAILURES|passed|failed|error/i.test(l)).slice(-20) }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    // The run covered every documented operation.
    const operations = Object.entries((JSON.parse(doc) as { paths: Record<string, object> }).paths)
      .filter(([path]) => /^\/(sms|lookup|organization)(\/|$)/.test(path)).reduce((n, [, ops]) => n + Object.keys(ops).length, 0);
    expect(operations).toBeGreaterThanOrEqual(11);
    expect(/Tested:\s+(\d+)/.exec(outcome.output)?.[1]).toBe(String(operations));
  }, 300_000);
});
