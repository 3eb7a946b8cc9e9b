// Schema-driven fuzz of the audience operations of the served OpenAPI document (spec 3 §4.2;
// the SMS operations have test/integration/openapi-fuzz.test.ts) with schemathesis, pinned in
// .tools/py: a product token with audience:search and PROJECT_AGGREGATIONS, the `project` path
// parameter pinned to its project (otherwise every case would be a 404), a fixed seed and a
// bounded number of cases: no 5xx and no disagreement between a response and the document.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { productToken } from '../support/ingest';
import { stack } from '../support/stack';
import { createTenant } from '../support/tenants';

const ROOT = join(__dirname, '..', '..');
const SCHEMATHESIS = join(ROOT, '.tools', 'py', 'bin', 'schemathesis');
const SEED = '12';
const MAX_EXAMPLES = '30';
const CHECKS = [
  'not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'response_schema_conformance',
  'negative_data_rejection', 'missing_required_header', 'ignored_auth', 'unsupported_method', 'allow_header_conformance',
].join(',');
const run = promisify(execFile);

type Doc = { paths: Record<string, Record<string, { servers?: unknown; parameters?: Array<{ name: string; schema: Record<string, unknown> }> }>> };

describe('spec 3 §4.2: schemathesis over the audience operations of /openapi.json', () => {
  test(`every audience operation, seed ${SEED}, at most ${MAX_EXAMPLES} cases each`, async () => {
    if (!existsSync(SCHEMATHESIS)) throw new Error('schemathesis is not installed in .tools/py: run `npm run bootstrap -- --fuzzer`');
    const tenant = await createTenant();
    const token = await productToken(tenant.orgId, tenant.projectId, ['audience:search', 'PROJECT_AGGREGATIONS']);
    const doc = (await fetch(`${stack().httpUrl}/openapi.json`).then((r) => r.json())) as Doc;
    const paths = Object.fromEntries(Object.entries(doc.paths).filter(([, ops]) => Object.values(ops).some((op) => JSON.stringify(op.servers ?? null).includes('/audience/v1'))).map(([p, ops]) => [p, Object.fromEntries(
      Object.entries(ops).map(([method, op]) => {
        const { servers: _servers, ...rest } = op;
        const parameters = (op.parameters ?? []).map((param) => (param.name === 'project' ? { ...param, schema: { type: 'string', enum: [tenant.projectId] } } : param));
        return [method, { ...rest, parameters }];
      }),
    )]));
    expect(Object.keys(paths).length).toBe(3);
    const dir = mkdtempSync(join(tmpdir(), 'audience-fuzz-'));
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify({ ...doc, servers: [{ url: '/audience/v1' }], paths }));
    const args = [
      '--config-file', join(ROOT, 'test', 'support', 'schemathesis.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/audience/v1`,
      '-H', `Authorization: Bearer ${token}`, '--seed', SEED, '--max-examples', MAX_EXAMPLES, '--workers', '1',
      '--generation-with-security-parameters', 'false', '--phases', 'examples,coverage,fuzzing', '--checks', CHECKS,
      '--request-timeout', '10', '--no-color', '--output-truncate', 'true', '--suppress-health-check', 'all',
    ];
    const outcome = await run(SCHEMATHESIS, args, { cwd: dir, timeout: 270_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } })
      .then(({ stdout }) => ({ code: 0, output: stdout }))
      .catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, output: `${err.stdout ?? ''}\n${err.stderr ?? ''}` }));
    if (outcome.code !== 0) process.stderr.write(outcome.output);
    expect({ exitCode: outcome.code, summary: outcome.output.split('\n').filter((l) => /FAILURES|passed|failed|error/i.test(l)).slice(-20) }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    expect(/Tested:\s+(\d+)/.exec(outcome.output)?.[1]).toBe('5');
  }, 300_000);
});
