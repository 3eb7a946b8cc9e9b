// The history writer: a durable JetStream pull consumer that moves accepted messages, status
// changes and lookups into ClickHouse in large batches (never a query per message; DESIGN
// §3a). Stream messages are acknowledged only after their rows are inserted, so a crash
// loses nothing: unacknowledged messages are delivered again and ReplacingMergeTree absorbs
// the repeats. Inbound messages (sms.inbound.<token>) are stored as messages of direction
// `inbound` with their one transition (core/sms/inbound.ts).
import type { JsMsg } from '@nats-io/jetstream';
import type { Lookup } from '../core/lookup';
import { inboundMessage, type DlrAttempt, type SmsMessage } from '../core/sms';
import type { ClickHouse } from '../infra/clickhouse';
import type { Logger } from '../infra/logger';
import { clickhouseRowsWritten } from '../infra/metrics';
import { consumeBatches, ensureDurable } from '../infra/consumer';
import type { Nats } from '../infra/nats';
import { ACCEPTED_FRAME, CONSUMERS, decode, HEADERS, parseSourceCounts, STREAMS, SUBJECTS, type InboundRecord, type TransitionRecord } from '../core/bus';
import { DlrHistory } from '../stores/dlr-history';
import { countStored } from './history-metrics';
import { LookupHistory } from '../stores/lookup-history';
import { MessageHistory } from '../stores/message-history';
import { backgroundInsertSettings } from '../stores/insert-rows';

export const HISTORY_CONSUMER = CONSUMERS.historyWriter;
const BATCH_MESSAGES = 2000;
/**
 * Every BATCH_TICK_MS what has arrived goes as before, unless it holds BATCH_LIGHT_BYTES or more
 * (about 25 sends' bus messages): then it gathers until its first message would wait past
 * BATCH_WAIT_MS. A few sends are listed within a tick; under load each table gets one insert a
 * second instead of four (docs/decisions.md, 2026-11-27, "the history writer's inserts").
 */
const BATCH_WAIT_MS = 1000;
const BATCH_TICK_MS = 250;
const BATCH_LIGHT_BYTES = 64 * 1024;
const POISON_ATTEMPTS = 5;
const STATUS_PREFIX = SUBJECTS.smsStatus('');
const INBOUND_PREFIX = SUBJECTS.smsInbound('');

export interface HistoryWriter {
  stop(): Promise<void>;
}

interface Batch {
  /** Messages of sms.accepted per source, counted as accepted once stored. */
  readonly accepted: Map<string, number>;
  /** sms.accepted bodies stored as they are (acceptedRows), and how many messages they hold. */
  readonly acceptedRows: Uint8Array[];
  acceptedRowCount: number;
  /** Messages decoded here: status changes, and accepted batches without a sources header. */
  readonly messages: SmsMessage[];
  readonly lookups: Lookup[];
  readonly transitions: TransitionRecord[];
  readonly attempts: DlrAttempt[];
}

const FRAME_HEAD = Buffer.from(ACCEPTED_FRAME.head);
const FRAME_TAIL = Buffer.from(ACCEPTED_FRAME.tail);

/**
 * The messages' JSON inside an sms.accepted body written by the acceptance path (it names its
 * messages per source in a header), or null for any other body, which is decoded instead.
 */
function acceptedRows(msg: JsMsg): { rows: Uint8Array; sources: Map<string, number> } | null {
  const sources = parseSourceCounts(msg.headers?.get(HEADERS.acceptedSources));
  const data = msg.data;
  if (!sources || data.length < FRAME_HEAD.length + FRAME_TAIL.length) return null;
  if (!FRAME_HEAD.equals(data.subarray(0, FRAME_HEAD.length)) || !FRAME_TAIL.equals(data.subarray(data.length - FRAME_TAIL.length))) return null;
  return { rows: data.subarray(FRAME_HEAD.length, data.length - FRAME_TAIL.length), sources };
}

/**
 * An inbound message's history: its message row and its one transition (seq 1, the status of
 * its DLR, so GET /sms/{id}/dlrs lists its webhook attempts). Null for a record published
 * without its owner (before inbound messages were stored).
 */
export function inboundRows(r: InboundRecord): { message: SmsMessage; transition: TransitionRecord } | null {
  if (r.orgId === undefined || r.projectId === undefined) return null;
  return {
    message: inboundMessage({ ...r, orgId: r.orgId, projectId: r.projectId, currency: r.currency ?? '' }),
    transition: { messageId: r.id, seq: 1, status: r.status, code: 0, eventAt: r.at, orgId: r.orgId, projectId: r.projectId, tokenId: r.tokenId, clientId: null },
  };
}

const tallyInto = (counts: Map<string, number>, key: string, n: number): void => { counts.set(key, (counts.get(key) ?? 0) + n); };

export function collect(msgs: readonly JsMsg[], log: Logger): Batch {
  const batch: Batch = { accepted: new Map(), acceptedRows: [], acceptedRowCount: 0, messages: [], lookups: [], transitions: [], attempts: [] };
  for (const msg of msgs) {
    try {
      if (msg.subject === SUBJECTS.smsAccepted) {
        const raw = acceptedRows(msg);
        if (raw) {
          batch.acceptedRows.push(raw.rows);
          for (const [source, n] of raw.sources) {
            tallyInto(batch.accepted, source, n);
            batch.acceptedRowCount += n;
          }
          continue;
        }
        const accepted = decode('accepted', msg.data).messages;
        batch.messages.push(...accepted);
        for (const m of accepted) tallyInto(batch.accepted, m.source, 1);
      } else if (msg.subject.startsWith(STATUS_PREFIX)) {
        const status = decode('status', msg.data);
        batch.messages.push(...status.messages);
        batch.transitions.push(...(status.transitions ?? []));
      } else if (msg.subject.startsWith(INBOUND_PREFIX)) {
        for (const record of decode('inbound', msg.data).inbound) {
          const rows = inboundRows(record);
          if (!rows) continue;
          batch.messages.push(rows.message);
          batch.transitions.push(rows.transition);
        }
      } else if (msg.subject === SUBJECTS.dlrAttempt) batch.attempts.push(...decode('dlrAttempt', msg.data).attempts);
      else if (msg.subject === SUBJECTS.lookupCreated) batch.lookups.push(...decode('lookups', msg.data).lookups);
    } catch (err) {
      log.error({ err, subject: msg.subject, seq: msg.seq }, 'unreadable stream message skipped');
    }
  }
  return batch;
}

/**
 * `backgroundNice` (BACKGROUND_NICE): the nice value of the inserts' threads on the in-process
 * engine (`os_thread_priority`; ClickHouse applies it only with CAP_SYS_NICE, which it needs to
 * reset the thread afterwards); 0 = as the gateways.
 */
export async function startHistoryWriter(nats: Nats, ch: ClickHouse, log: Logger, options: { readonly backgroundNice: number } = { backgroundNice: 0 }): Promise<HistoryWriter> {
  await ensureDurable(nats.jsm, {
    stream: STREAMS.sms.name,
    name: HISTORY_CONSUMER,
    filterSubjects: [SUBJECTS.smsAccepted, SUBJECTS.smsStatusAll, SUBJECTS.smsInboundAll, SUBJECTS.dlrAttempt, SUBJECTS.lookupCreated],
    maxAckPending: 50_000,
    ackWaitMs: 60_000,
  });
  const inProcess = backgroundInsertSettings(options.backgroundNice);
  const messages = new MessageHistory(ch, inProcess);
  const lookups = new LookupHistory(ch, inProcess);
  const dlrs = new DlrHistory(ch, undefined, inProcess);

  const insert = async (msgs: readonly JsMsg[]): Promise<boolean> => {
    const batch = collect(msgs, log);
    try {
      await Promise.all([
        messages.insert(batch.messages), messages.insertAccepted(batch.acceptedRows), lookups.insert(batch.lookups),
        dlrs.insertTransitions(batch.transitions), dlrs.insertAttempts(batch.attempts),
      ]);
      clickhouseRowsWritten.inc({ table: 'sms_messages' }, batch.messages.length + batch.acceptedRowCount);
      clickhouseRowsWritten.inc({ table: 'lookups' }, batch.lookups.length);
      countStored(batch, msgs);
      return true;
    } catch (err) {
      log.error({ err, streamMessages: msgs.length }, 'history writer: insert failed');
      return false;
    }
  };

  const flush = async (fetched: readonly JsMsg[]): Promise<void> => {
    if (await insert(fetched)) {
      for (const msg of fetched) msg.ack();
      return;
    }
    // One unreadable row must not hold back everyone's history: insert stream messages one by
    // one to find it, and after POISON_ATTEMPTS deliveries give up on it (it stays in the stream
    // for its max age, and the log names it) so the rest flows.
    for (const msg of fetched) {
      if (await insert([msg])) msg.ack();
      else if (msg.info.deliveryCount >= POISON_ATTEMPTS) {
        log.error({ subject: msg.subject, seq: msg.seq }, 'history writer: a stream message keeps failing to insert; terminated (still in the stream)');
        msg.term();
      } else msg.nak(1000);
    }
  };

  const running = consumeBatches({
    js: nats.js, stream: STREAMS.sms.name, durable: HISTORY_CONSUMER, pull: BATCH_MESSAGES * 2, log,
    maxBatch: BATCH_MESSAGES, maxWaitMs: BATCH_WAIT_MS, tickMs: BATCH_TICK_MS, lightBytes: BATCH_LIGHT_BYTES, drainOnStop: true, handle: flush,
  });
  log.info({ consumer: HISTORY_CONSUMER }, 'history writer running');
  return running;
}
