// The product's Node flags (infra/paths.ts PRODUCT_NODE_FLAGS) are the same wherever it is
// started as `npm start` starts it: package.json's start script and the test stack / benchmarks
// (support/stack.ts). The ingestion figures in docs/benchmarks.md are measured with them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { PRODUCT_NODE_FLAGS, projectPath } from '../../infra/paths';

describe('the product\'s Node flags', () => {
  test('npm start runs dist/main.js with every one of them', () => {
    const start = (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start'] ?? '';
    const node = /\bnode ((?:--\S+ )*)dist\/main\.js/.exec(start);
    expect(node).not.toBeNull();
    expect((node?.[1] ?? '').trim().split(' ')).toEqual([...PRODUCT_NODE_FLAGS]);
  });

  test.each([['support', 'stack.ts'], ['bench', 'reliability-ingest.ts']])('%s/%s starts the product with them', (...path) => {
    expect(readFileSync(projectPath(...path), 'utf8')).toMatch(/spawn\(process\.execPath, \[\.\.\.PRODUCT_NODE_FLAGS,/);
  });

  test('this Node accepts them', () => {
    const result = spawnSync(process.execPath, [...PRODUCT_NODE_FLAGS, '-e', ''], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
