// The pipeline-metrics role: what the bus says about the pipeline, polled off the hot path. Every
// few seconds it reads each durable consumer's info (lag = num_pending + num_ack_pending, and
// the age of the oldest message it has not acknowledged) and counts the DLRs in dead_dlrs; it
// watches KV idempotency for refund markers (one per refunded message). It runs in one process
// per deployment (with the ingest writer, of which there is one): its refund counter would
// otherwise be counted by every process that runs it.
import { type ConsumerInfo, type JetStreamManager, type MsgRequest } from '@nats-io/jetstream';
import { KvWatchInclude, type KV } from '@nats-io/kv';
import { CONSUMERS, STREAMS } from '../core/bus';
import type { Logger } from '../infra/logger';
import { consumerAckPending, consumerLag, consumerOldestAge, consumerPending, dlrDeadLetters, smsRefunds } from '../infra/metrics';
import type { Nats } from '../infra/nats';

const POLL_MS = 5000;
const DEAD_LETTER_POLL_EVERY = 3;
/** Consumers per label whose oldest unacknowledged message is read each poll (per-token SMPP feeds share one label). */
const AGE_READS_PER_LABEL = 5;
const REFUND_KEYS = 'refund.>';
const SMPP_DLR_PREFIX = CONSUMERS.smppDlr('');
const KNOWN_CONSUMERS: ReadonlySet<unknown> = new Set(Object.values(CONSUMERS).filter((c) => typeof c === 'string'));

export interface PipelineMetrics {
  /** One poll now (tests, and the first one at start). */
  poll(): Promise<void>;
  stop(): Promise<void>;
}

/** The bounded label of a durable consumer: its name when the product declares it, one label for every per-token SMPP feed, `other` else. */
export function consumerLabel(name: string): string {
  if (KNOWN_CONSUMERS.has(name)) return name;
  if (name.startsWith(SMPP_DLR_PREFIX)) return 'smpp-dlr';
  return 'other';
}

interface ConsumerFigures {
  pending: number;
  ackPending: number;
  oldestAgeSeconds: number;
}

function filtersOf(info: ConsumerInfo): string[] {
  const { filter_subject: one, filter_subjects: many } = info.config;
  if (many && many.length > 0) return many;
  return one ? [one] : ['>'];
}

/** The publication time of the first message after the ack floor that the consumer's filters match. */
async function oldestUnacknowledged(jsm: JetStreamManager, info: ConsumerInfo): Promise<Date | undefined> {
  const seq = info.ack_floor.stream_seq + 1;
  const found = await Promise.all(filtersOf(info).map(async (subject) => {
    try {
      // STREAM.MSG.GET takes next_by_subj with seq (server 2.9+); the client's type knows only seq and last_by_subj.
      return await jsm.streams.getMessage(info.stream_name, { seq, next_by_subj: subject } as unknown as MsgRequest);
    } catch {
      return null; // none left (or the message aged out between the two reads)
    }
  }));
  let oldest: Date | undefined;
  for (const msg of found) if (msg && (!oldest || msg.time < oldest)) oldest = msg.time;
  return oldest;
}

async function readConsumers(jsm: JetStreamManager, now: number): Promise<Map<string, ConsumerFigures>> {
  const figures = new Map<string, ConsumerFigures>();
  for (const stream of Object.values(STREAMS)) {
    const infos: ConsumerInfo[] = [];
    try {
      for await (const info of jsm.consumers.list(stream.name)) infos.push(info);
    } catch {
      continue; // the stream is not there (yet)
    }
    const lagging = new Map<string, ConsumerInfo[]>();
    for (const info of infos) {
      if (!info.config.durable_name) continue; // ordered and ephemeral consumers (KV watchers, readers)
      const key = `${stream.name}\u0000${consumerLabel(info.name)}`;
      const f = figures.get(key) ?? { pending: 0, ackPending: 0, oldestAgeSeconds: 0 };
      f.pending += info.num_pending;
      f.ackPending += info.num_ack_pending;
      figures.set(key, f);
      if (info.num_pending + info.num_ack_pending > 0) lagging.set(key, [...(lagging.get(key) ?? []), info]);
    }
    for (const [key, group] of lagging) {
      // Stream sequences grow with time: the consumers with the lowest ack floors hold the oldest
      // messages. A few are read, so a thousand per-token feeds with lag cost a few reads a poll.
      const oldest = group.sort((a, b) => a.ack_floor.stream_seq - b.ack_floor.stream_seq).slice(0, AGE_READS_PER_LABEL);
      const f = figures.get(key) as ConsumerFigures;
      for (const info of oldest) {
        const at = await oldestUnacknowledged(jsm, info);
        if (at) f.oldestAgeSeconds = Math.max(f.oldestAgeSeconds, (now - at.getTime()) / 1000);
      }
    }
  }
  return figures;
}

async function countKeys(kv: KV): Promise<number> {
  let n = 0;
  for await (const key of await kv.keys()) if (key) n += 1;
  return n;
}

export async function startPipelineMetrics(nats: Nats, log: Logger): Promise<PipelineMetrics> {
  let polls = 0;
  let seen = new Set<string>();
  const poll = async (): Promise<void> => {
    const figures = await readConsumers(nats.jsm, Date.now());
    const now = new Set(figures.keys());
    for (const [key, f] of figures) {
      const [stream, consumer] = key.split('\u0000') as [string, string];
      const labels = { stream, consumer };
      consumerPending.set(labels, f.pending);
      consumerAckPending.set(labels, f.ackPending);
      consumerLag.set(labels, f.pending + f.ackPending);
      consumerOldestAge.set(labels, f.oldestAgeSeconds);
    }
    for (const key of seen) {
      if (now.has(key)) continue;
      const [stream, consumer] = key.split('\u0000') as [string, string];
      for (const gauge of [consumerPending, consumerAckPending, consumerLag, consumerOldestAge]) gauge.remove({ stream, consumer });
    }
    seen = now;
    if (polls % DEAD_LETTER_POLL_EVERY === 0) dlrDeadLetters.set(await countKeys(nats.kv.deadDlrs));
    polls += 1;
  };

  // A refund claims its marker once (create), so each PUT seen after start is one refunded message.
  const refunds = await nats.kv.idempotency.watch({ key: REFUND_KEYS, include: KvWatchInclude.UpdatesOnly, headers_only: true });
  const watching = (async () => {
    for await (const entry of refunds) if (entry.operation === 'PUT') smsRefunds.inc();
  })().catch((err: unknown) => log.warn({ err }, 'pipeline metrics: refund watch ended'));

  // One poll at a time: the next is scheduled when the last is done, however long it took.
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const next = (): Promise<void> => {
    running = running.then(poll).catch((err: unknown) => log.warn({ err }, 'pipeline metrics: poll failed'));
    return running;
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void next().then(schedule), POLL_MS);
    timer.unref();
  };
  void next().then(schedule);
  log.info({ pollMs: POLL_MS }, 'pipeline metrics running');
  return {
    poll: next,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      refunds.stop();
      await Promise.allSettled([running, watching]);
    },
  };
}
