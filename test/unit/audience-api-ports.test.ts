// docs/architecture.md "Ports": gateways take core ports, never store types. The audience API
// (spec 3) takes core/filters/grammar-b/ports.ts and core/accounts (its ports).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('gateways/http/audience-api.ts takes core ports', () => {
  test('it imports nothing of stores/', () => {
    const source = readFileSync(join(__dirname, '../../gateways/http/audience-api.ts'), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(imports.filter((p) => p?.includes('/stores/'))).toEqual([]);
    expect(imports).toEqual(expect.arrayContaining(['../../core/filters/grammar-b/ports', '../../core/accounts']));
  });
});
