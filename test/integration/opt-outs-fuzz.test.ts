// Schema-driven fuzz of the opt-out list's operations in the served OpenAPI document (DESIGN §4
// "Two-way"; gateways/http/opt-outs-api.ts), as test/integration/openapi-fuzz.test.ts does for the
// other SMS API operations: schemathesis (pinned, .tools/py), a fixed seed, bounded cases; no
// 5xx and no disagreement between a response and the document.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stack } from '../support/stack';
import { createTenant } from '../support/tenants';

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

describe('DESIGN §4 Two-way: schemathesis over the /opt-outs operations of /openapi.json', () => {
  test(`every opt-out operation, seed ${SEED}, at most ${MAX_EXAMPLES} cases each: no 5xx and no disagreement with the document`, async () => {
    if (!existsSync(SCHEMATHESIS)) throw new Error(`schemathesis is not installed in .tools/py: run \`npm run bootstrap -- --fuzzer\` (npm test does it)`);
    expect(execFileSync(SCHEMATHESIS, ['--version'], { encoding: 'utf8' })).toContain(VERSION);
    const tenant = await createTenant({ balance: 10 });
    const dir = mkdtempSync(join(tmpdir(), 'openapi-fuzz-'));
    const doc = await fetch(`${stack().httpUrl}/openapi.json`).then((r) => r.text());
    writeFileSync(join(dir, 'openapi.json'), doc);
    const args = [
      '--config-file', join(ROOT, 'test', 'support', 'schemathesis.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/transactional/v1`, '-H', `Authorization: Bearer ${tenant.token}`,
      '--seed', SEED, '--max-examples', MAX_EXAMPLES, '--workers', '1',
      // One credential per request: the document's security alternatives are Bearer OR access_token (both at once is a 401).
      '--generation-with-security-parameters', 'false',
      '--include-path-regex', '^/opt-outs(/|$)',
      // No stateful phase: the opt-out operations declare no links.
      '--phases', 'examples,coverage,fuzzing', '--checks', CHECKS, '--request-timeout', '10', '--no-color', '--output-truncate', 'true',
      '--report', 'ndjson', '--report-dir', dir, '--suppress-health-check', 'all',
    ];
    const outcome = await run(SCHEMATHESIS, args, { cwd: dir, timeout: 270_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } })
      .then(({ stdout }) => ({ code: 0, output: stdout }))
      .catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, output: `${err.stdout ?? ''}\n${err.stderr ?? ''}` }));
    if (outcome.code !== 0) process.stderr.write(outcome.output);
    expect({ exitCode: outcome.code, summary: outcome.output.split('\n').filter((l) => /FAILURES|passed|failed|error/i.test(l)).slice(-20) }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    // The run covered every documented operation.
    const operations = Object.entries((JSON.parse(doc) as { paths: Record<string, object> }).paths)
      .filter(([path]) => /^\/opt-outs(\/|$)/.test(path)).reduce((n, [, ops]) => n + Object.keys(ops).length, 0);
    expect(operations).toBe(3);
    expect(/Tested:\s+(\d+)/.exec(outcome.output)?.[1]).toBe(String(operations));
  }, 300_000);
});
