// The jest global setup of the integration run: one stack (support/stack.ts; TEST_TOPOLOGY=cluster:
// the scale-out topology, cluster-stack.ts) for every suite, whose connection details the suites
// read from the file named by $STACK_FILE.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, type RunningStack } from '../../support/stack';
import { startClusterStack } from './cluster-stack';

export default async function globalSetup(): Promise<void> {
  // TEST_TOPOLOGY=cluster (npm run test:cluster): the scale-out topology instead (cluster-stack.ts).
  // BACKGROUND_NICE 0 unless set: on a real deployment the clients are other machines, here the
  // suites' own clients (jest workers, Chromium) keep both cores busy at nice 0 and would starve
  // the lifecycle at 10 (background-priority.test.ts starts its own stack at the default).
  const env = { BACKGROUND_NICE: process.env['BACKGROUND_NICE'] ?? '0' };
  const stack = process.env['TEST_TOPOLOGY'] === 'cluster' ? await startClusterStack() : await startStack(env);
  const file = join(stack.info.dataDir, 'stack.json');
  writeFileSync(file, JSON.stringify(stack.info, null, 2));
  process.env['STACK_FILE'] = file;
  (globalThis as { __STACK__?: RunningStack }).__STACK__ = stack;
}
