// A worker of the real workflows over mocked activities, on the stack's Temporal server and a
// task queue of its own, registered for one describe block (beforeAll / afterAll).
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { stack } from '../../support/stack';

export interface MockedWorker {
  /** Set in beforeAll: its client starts the workflows on `taskQueue`. */
  readonly env: TestWorkflowEnvironment;
  readonly taskQueue: string;
}

/** Call inside a describe block: starts the worker before its tests and stops it after them. */
export function mockedWorker(prefix: string, activities: object): MockedWorker {
  const ctx = { taskQueue: `${prefix}-${randomUUID()}` } as { env: TestWorkflowEnvironment; taskQueue: string };
  let worker: Worker;
  let running: Promise<void>;
  beforeAll(async () => {
    const info = stack();
    ctx.env = await TestWorkflowEnvironment.createFromExistingServer({ address: info.temporalAddress, namespace: info.namespace });
    worker = await Worker.create({ connection: ctx.env.nativeConnection, namespace: info.namespace, taskQueue: ctx.taskQueue, workflowsPath: require.resolve('../../workflows'), activities });
    running = worker.run();
  }, 60_000);
  afterAll(async () => {
    worker.shutdown();
    await running;
    await ctx.env.teardown();
  });
  return ctx;
}
