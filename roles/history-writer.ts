// The history writer: a durable JetStream pull consumer that moves accepted messages, status
// changes and lookups into ClickHouse in large batches (never a query per message; DESIGN
// §3a). Stream messages are acknowledged only after their rows are inserted, so a crash
// loses nothing: unacknowledged messages are delivered again and ReplacingMergeTree absorbs
// the repeats.
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Lookup } from '../core/lookup/lookup';
import type { SmsMessage } from '../core/sms/message';
import type { ClickHouse } from '../infra/clickhouse';
import type { Logger } from '../infra/logger';
import { clickhouseRowsWritten } from '../infra/metrics';
import { ensureConsumer, STREAMS, SUBJECTS, type Nats } from '../infra/nats';
import type { DlrAttempt } from '../activities/lifecycle';
import { DlrHistory, type TransitionRecord } from '../stores/dlr-history';
import { LookupHistory } from '../stores/lookup-history';
import { MessageHistory } from '../stores/message-history';

export const HISTORY_CONSUMER = 'history-writer';
const BATCH_MESSAGES = 2000;
const BATCH_WAIT_MS = 250;
const POISON_ATTEMPTS = 5;

export interface HistoryWriter {
  stop(): Promise<void>;
}

interface Batch {
  readonly messages: SmsMessage[];
  readonly lookups: Lookup[];
  readonly transitions: TransitionRecord[];
  readonly attempts: DlrAttempt[];
}

export function collect(msgs: readonly JsMsg[], log: Logger): Batch {
  const batch: Batch = { messages: [], lookups: [], transitions: [], attempts: [] };
  for (const msg of msgs) {
    try {
      if (msg.subject === SUBJECTS.smsAccepted) batch.messages.push(...msg.json<{ messages: SmsMessage[] }>().messages);
      else if (msg.subject.startsWith('sms.status.')) {
        const status = msg.json<{ messages: SmsMessage[]; transitions?: TransitionRecord[] }>();
        batch.messages.push(...status.messages);
        batch.transitions.push(...(status.transitions ?? []));
      } else if (msg.subject === SUBJECTS.dlrAttempt) batch.attempts.push(...msg.json<{ attempts: DlrAttempt[] }>().attempts);
      else if (msg.subject === SUBJECTS.lookupCreated) batch.lookups.push(...msg.json<{ lookups: Lookup[] }>().lookups);
    } catch (err) {
      log.error({ err, subject: msg.subject, seq: msg.seq }, 'unreadable stream message skipped');
    }
  }
  return batch;
}

export async function startHistoryWriter(nats: Nats, ch: ClickHouse, log: Logger): Promise<HistoryWriter> {
  await ensureConsumer(nats.jsm, STREAMS.sms.name, {
    durable_name: HISTORY_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subjects: [SUBJECTS.smsAccepted, SUBJECTS.smsStatusAll, SUBJECTS.dlrAttempt, SUBJECTS.lookupCreated],
    max_ack_pending: 50_000,
    ack_wait: 60_000_000_000,
  });
  const consumer = await nats.js.consumers.get(STREAMS.sms.name, HISTORY_CONSUMER);
  const messages = new MessageHistory(ch);
  const lookups = new LookupHistory(ch);
  const dlrs = new DlrHistory(ch);
  const stream = await consumer.consume({ max_messages: BATCH_MESSAGES * 2 });
  let buffer: JsMsg[] = [];
  let chain: Promise<void> = Promise.resolve();

  const insert = async (msgs: readonly JsMsg[]): Promise<boolean> => {
    const batch = collect(msgs, log);
    try {
      await Promise.all([messages.insert(batch.messages), lookups.insert(batch.lookups), dlrs.insertTransitions(batch.transitions), dlrs.insertAttempts(batch.attempts)]);
      clickhouseRowsWritten.inc({ table: 'sms_messages' }, batch.messages.length);
      clickhouseRowsWritten.inc({ table: 'lookups' }, batch.lookups.length);
      return true;
    } catch (err) {
      log.error({ err, streamMessages: msgs.length }, 'history writer: insert failed');
      return false;
    }
  };

  const flush = async (): Promise<void> => {
    const fetched = buffer;
    buffer = [];
    if (fetched.length === 0) return;
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
  const scheduleFlush = (): Promise<void> => (chain = chain.then(flush));
  const timer = setInterval(() => void scheduleFlush(), BATCH_WAIT_MS);

  const loop = (async () => {
    for await (const msg of stream) {
      buffer.push(msg);
      if (buffer.length >= BATCH_MESSAGES) await scheduleFlush();
    }
  })().catch((err: unknown) => log.error({ err }, 'history writer: consumer stopped'));

  log.info({ consumer: HISTORY_CONSUMER }, 'history writer running');
  return {
    stop: async () => {
      clearInterval(timer);
      await stream.close();
      await loop;
      await scheduleFlush();
    },
  };
}
