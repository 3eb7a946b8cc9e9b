// The SMS pipeline's counters, derived from the bus by the history writer rather than counted on
// the acceptance path: messages accepted (sms.accepted), transitions and final statuses
// (sms.status.*), DLR webhook attempts and their latency (sms.dlr.attempt), and how large and
// how late its ClickHouse inserts are. Counted once a run of stream messages is stored, so a
// failed insert (delivered again) is not counted twice.
import type { JsMsg } from '@nats-io/jetstream';
import type { TransitionRecord } from '../core/bus';
import { FINAL_STATUSES, type DlrAttempt, type SmsMessage } from '../core/sms';
import {
  clickhouseInsertLag, clickhouseInsertRows, dlrAttemptLatency, dlrAttempts, responseClass, smsMessagesAccepted, smsMessagesFinal, smsStatusTransitions,
} from '../infra/metrics';

const NANOS_PER_SECOND = 1e9;
const FINAL: ReadonlySet<string> = new Set(FINAL_STATUSES);

export interface StoredBatch {
  /** Accepted messages per source. */
  readonly accepted: ReadonlyMap<string, number>;
  /** Accepted messages stored without being decoded (not in `messages`). */
  readonly acceptedRowCount: number;
  readonly messages: readonly SmsMessage[];
  readonly lookups: readonly unknown[];
  readonly transitions: readonly TransitionRecord[];
  readonly attempts: readonly DlrAttempt[];
}

/** Label value → how many, so a run costs one increment per label value instead of one per item. */
function tally<T>(items: readonly T[], label: (item: T) => string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const value = label(item);
    if (value !== undefined) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return counts;
}

/** Counts what a stored run of stream messages says about the pipeline. */
export function countStored(batch: StoredBatch, msgs: readonly JsMsg[], now = Date.now()): void {
  for (const [source, n] of batch.accepted) smsMessagesAccepted.inc({ source }, n);
  for (const [status, n] of tally(batch.transitions, (t) => t.status)) {
    smsStatusTransitions.inc({ status }, n);
    if (FINAL.has(status)) smsMessagesFinal.inc({ status }, n);
  }
  for (const [key, n] of tally(batch.attempts, (a) => `${a.outcome} ${responseClass(a.responseStatus)}`)) {
    const [outcome, response] = key.split(' ') as [string, string];
    dlrAttempts.inc({ outcome, response }, n);
  }
  for (const a of batch.attempts) if (a.outcome !== 'skipped') dlrAttemptLatency.observe({ outcome: a.outcome }, a.latencyMs / 1000);
  const sizes: Array<[string, number]> = [['sms_messages', batch.messages.length + batch.acceptedRowCount], ['lookups', batch.lookups.length], ['sms_transitions', batch.transitions.length], ['dlr_attempts', batch.attempts.length]];
  for (const [table, rows] of sizes) if (rows > 0) clickhouseInsertRows.observe({ table }, rows);
  observeLag('history', msgs, now);
}

/** From each stream message's publication (its JetStream timestamp) to now, when its rows are stored. */
export function observeLag(writer: 'history' | 'ingest', msgs: readonly JsMsg[], now = Date.now()): void {
  const nowSeconds = now / 1000;
  for (const msg of msgs) clickhouseInsertLag.observe({ writer }, Math.max(0, nowSeconds - msg.info.timestampNanos / NANOS_PER_SECOND));
}
