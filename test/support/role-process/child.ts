// A role process for test/unit/role-processes.test.ts: speaks the product's IPC protocol
// (infra/role-processes.ts) with a counter of its own. `--role=fail` exits during start-up,
// `--role=crash` right after it said it is ready.
import { connectToParent } from '../../../infra/role-processes';

const role = process.argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? '';
if (role === 'fail') process.exit(3);
const counter = { name: 'fixture_events_total', help: 'events seen by the fixture', type: 'counter', aggregator: 'sum', values: [{ value: 2, labels: { role } }] };
const channel = connectToParent(
  process.argv.some((a) => a.startsWith('--role-process=')),
  () => Promise.resolve({ json: [counter], text: `# fixture exporter of ${role}\n` }),
  () => process.exit(0),
);
setInterval(() => undefined, 60_000);
channel?.ready();
if (role === 'crash') setTimeout(() => process.exit(4), 20);
