// Benchmark only, and its own workflow bundle entry (bench/support/ceiling.ts bundles this file,
// not the product's workflows/index.ts): a trivial workflow shaped like smsLifecycle — a local
// activity at start, one durable timer, `signals` signals each answered by one local activity,
// then completion — so the dev server's ceiling for the same history can be measured.
import { condition, defineSignal, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { ProbeActivities } from '../../activities/probe';

export const benchSignal = defineSignal<[number]>('benchStep');

export async function benchCeiling(signals: number): Promise<number> {
  const { noop } = proxyLocalActivities<ProbeActivities>({ startToCloseTimeout: '10 seconds' });
  const inbox: number[] = [];
  setHandler(benchSignal, (n) => { inbox.push(n); });
  await noop();
  let timedOut = false;
  void sleep('1 hour').then(() => { timedOut = true; });
  let done = 0;
  while (done < signals && !timedOut) {
    await condition(() => inbox.length > 0 || timedOut);
    done += inbox.splice(0).length;
    await noop();
  }
  return done;
}
