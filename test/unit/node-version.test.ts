// The product refuses a Node.js older than its dependencies need, naming what to run instead
// (infra/node-version.ts; main.ts loads it before anything else).
import { readFileSync } from 'node:fs';
import { MINIMUM_NODE, unsupportedNode } from '../../infra/node-version';
import { projectPath } from '../../infra/paths';

test('Node 22.19 and later run the product; older ones are refused with what to run instead', () => {
  for (const ok of ['22.19.0', '22.20.1', '23.0.0', '24.21.0', '30.1.2']) expect([ok, unsupportedNode(ok)]).toEqual([ok, null]);
  for (const old of ['20.20.2', '22.18.9', '18.0.0', '']) {
    const problem = unsupportedNode(old);
    expect(problem).toContain(`>= ${MINIMUM_NODE.join('.')}`);
    expect(problem).toContain('npm start');
  }
});

test('main.ts loads the check before any other module', () => {
  const imports = readFileSync(projectPath('main.ts'), 'utf8').split('\n').filter((line) => line.startsWith('import '));
  expect(imports[0]).toBe("import './infra/node-version';");
});
