// What the pipeline metrics cost where they are counted (docs/metrics.md), in-process, no engine:
// the SMPP counter per answered submit_sm (the only increment on an acceptance path), the
// history writer's countStored per stored message, and one exposition of the registry.
// Figures printed and written to bench/results/metrics-overhead.json.
//   node --import tsx bench/metrics-overhead.ts
import type { JsMsg } from '@nats-io/jetstream';
import { loadavg } from 'node:os';
import type { TransitionRecord } from '../core/bus';
import type { DlrAttempt, SmsMessage } from '../core/sms';
import { registry, smppPdus, smppSubmitOk } from '../infra/metrics';
import { countStored } from '../pipelines/history-metrics';
import { writeResult } from './support/results';

const ROUNDS = 5;

function nsPerOp(ops: number, fn: () => void): number {
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const started = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - started) / ops);
  }
  return samples.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] as number;
}

const N = 1_000_000;
const submitOk = nsPerOp(N, () => { for (let i = 0; i < N; i += 1) smppSubmitOk.inc(); });
const submitLabelled = nsPerOp(N, () => { for (let i = 0; i < N; i += 1) smppPdus.inc({ command: 'submit_sm', status: 'ESME_ROK' }); });

// One history-writer run: 2000 accepted messages, 6000 transitions, 6000 DLR attempts, 2000 stream messages.
const BATCH = 2000;
const message = { source: 'http' } as SmsMessage;
const batch = {
  accepted: new Map([['http', BATCH]]),
  acceptedRowCount: 0,
  messages: Array.from({ length: BATCH }, () => message),
  lookups: [],
  transitions: Array.from({ length: BATCH * 3 }, (_, i) => ({ status: (['sent', 'buffered', 'delivered'] as const)[i % 3] }) as TransitionRecord),
  attempts: Array.from({ length: BATCH * 3 }, () => ({ outcome: 'delivered', responseStatus: 200, latencyMs: 12 }) as DlrAttempt),
};
const msgs = Array.from({ length: BATCH }, () => ({ info: { timestampNanos: Date.now() * 1e6 } }) as unknown as JsMsg);
const RUNS = 200;
const perRun = nsPerOp(RUNS, () => { for (let i = 0; i < RUNS; i += 1) countStored(batch, msgs); });

async function main(): Promise<void> {
  const EXPOSITIONS = 50;
  const expositionStarted = process.hrtime.bigint();
  for (let i = 0; i < EXPOSITIONS; i += 1) await registry.metrics();
  const expositionMs = Number(process.hrtime.bigint() - expositionStarted) / EXPOSITIONS / 1e6;

  const results = {
    at: new Date().toISOString(),
    load: loadavg().map((l) => Math.round(l * 100) / 100),
    smppSubmitOkIncNs: Math.round(submitOk),
    smppLabelledIncNs: Math.round(submitLabelled),
    historyRun: { streamMessages: BATCH, accepted: BATCH, transitions: BATCH * 3, attempts: BATCH * 3, microseconds: Math.round(perRun / 1000), nsPerStreamMessage: Math.round(perRun / BATCH) },
    expositionMs: Math.round(expositionMs * 100) / 100,
  };
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  writeResult('metrics-overhead.json', results);
}

void main();
