// Schema-driven fuzz of the audience operations of the served OpenAPI document (spec 3 §4.2;
// the SMS operations have test/integration/openapi-fuzz.test.ts) with schemathesis, pinned in
// .tools/py: a product token with audience:search and PROJECT_AGGREGATIONS, the `project` path
// parameter pinned to its project (otherwise every case would be a 404), a fixed seed and a
// bounded number of cases: no 5xx and no disagreement between a response and the document.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { productToken } from '../support/ingest';
import { FUZZ_CHECKS, FUZZ_COMMON_ARGS, SCHEMATHESIS_CONFIG, runSchemathesis } from '../support/schemathesis';
import { stack } from '../../support/stack';
import { createTenant } from '../../support/tenants';

const SEED = '12';
const MAX_EXAMPLES = '30';

type Doc = { paths: Record<string, Record<string, { servers?: unknown; parameters?: Array<{ name: string; schema: Record<string, unknown> }> }>> };

describe('spec 3 §4.2: schemathesis over the audience operations of /openapi.json', () => {
  test(`every audience operation, seed ${SEED}, at most ${MAX_EXAMPLES} cases each`, async () => {
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
    const outcome = await runSchemathesis([
      '--config-file', SCHEMATHESIS_CONFIG('schemathesis.toml'), 'run', join(dir, 'openapi.json'), '--url', `${stack().httpUrl}/audience/v1`,
      '-H', `Authorization: Bearer ${token}`, '--seed', SEED, '--max-examples', MAX_EXAMPLES,
      '--phases', 'examples,coverage,fuzzing', '--checks', FUZZ_CHECKS.join(','), ...FUZZ_COMMON_ARGS,
    ], { cwd: dir });
    expect({ exitCode: outcome.code, summary: outcome.summary }).toEqual({ exitCode: 0, summary: expect.any(Array) });
    expect(outcome.tested).toBe(5);
  }, 300_000);
});
