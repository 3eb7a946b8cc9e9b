// Benchmark only (bench/lifecycle.ts): a trivial workflow shaped like smsLifecycle — a local
// activity at start, one durable timer, three signals each answered by a local activity — so
// the dev server's ceiling for this history size can be measured beside the real lifecycle.
import { condition, defineSignal, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { ProbeActivities } from '../activities/probe';

export const benchSignal = defineSignal<[number]>('benchStep');

export async function benchCeiling(steps: number): Promise<number> {
  const { noop } = proxyLocalActivities<ProbeActivities>({ startToCloseTimeout: '10 seconds' });
  const inbox: number[] = [];
  setHandler(benchSignal, (n) => { inbox.push(n); });
  await noop();
  let timedOut = false;
  void sleep('1 hour').then(() => { timedOut = true; });
  let done = 0;
  while (done < steps && !timedOut) {
    await condition(() => inbox.length > 0 || timedOut);
    for (const _ of inbox.splice(0)) {
      await noop();
      await noop();
      done += 1;
    }
  }
  return done;
}
