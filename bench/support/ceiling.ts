// The dev server's ceiling for the lifecycle's shape: N benchCeiling workflows (a local activity
// at start, one durable timer, `signals` signals each answered by one local activity), started
// eagerly — as the lifecycle starter does — by 32 concurrent clients on the connection of a worker
// in this process; workflows/s from the first start to the last result.
import { Client, WorkflowIdConflictPolicy } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createProbeActivities } from '../../activities/probe';

export interface CeilingResult {
  readonly workflows: number;
  readonly seconds: number;
  readonly workflowsPerSecond: number;
  readonly historyEvents: number;
}

let runtimeInstalled = false;

export async function bundleCeilingWorkflow(): Promise<string> {
  if (!runtimeInstalled) Runtime.install({ logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
  return (await bundleWorkflowCode({ workflowsPath: require.resolve('./ceiling-workflow'), logger: new DefaultLogger('WARN') })).code;
}

export async function measureCeiling(address: string, code: string, workflows: number, signals: number, say: (line: string) => void): Promise<CeilingResult> {
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `ceiling-${Date.now()}`;
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: { code }, activities: createProbeActivities('ceiling') });
  const running = worker.run();
  try {
    return await runLoad(new Client({ connection }), taskQueue, workflows, signals, say);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
}

async function runLoad(client: Client, taskQueue: string, workflows: number, signals: number, say: (line: string) => void): Promise<CeilingResult> {
  const id = (i: number): string => `${taskQueue}-${i}`;
  const started = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    for (;;) {
      const i = next++;
      if (i >= workflows) return;
      const handle = await client.workflow.start('benchCeiling', { taskQueue, workflowId: id(i), args: [signals], workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING, requestEagerStart: true });
      for (let s = 0; s < signals; s++) await handle.signal('benchStep', s);
      if (i % 500 === 499) say(`${i + 1}/${workflows} workflows started and signalled`);
    }
  }));
  for (let i = 0; i < workflows; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, workflows - i) }, (_, k) => client.workflow.getHandle(id(i + k)).result()));
  }
  const seconds = (Date.now() - started) / 1000;
  const historyEvents = (await client.workflow.getHandle(id(0)).fetchHistory()).events?.length ?? 0;
  return { workflows, seconds, workflowsPerSecond: workflows / seconds, historyEvents };
}
