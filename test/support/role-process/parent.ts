// A parent for test/unit/role-processes.test.ts: starts one role process, prints its pid, and
// waits (the test kills this process with -9 and expects the child to go too).
import { join } from 'node:path';
import { createLogger } from '../../../infra/logger';
import { startRoleProcesses } from '../../../infra/role-processes';

const children = startRoleProcesses([{ name: 'orphan', roles: ['orphan'], env: {} }], { script: join(__dirname, 'child.ts'), execArgv: process.execArgv }, createLogger('fatal', {}));
void children.ready.then(() => {
  process.stdout.write(`${JSON.stringify({ child: children.pids[0] })}\n`);
  setInterval(() => undefined, 60_000);
});
