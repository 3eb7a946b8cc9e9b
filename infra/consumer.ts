// Durable JetStream pull consumers, written once: the consumer's configuration, a pull loop
// that resumes after an interruption (a deleted consumer, a lost connection), and two ways to
// hand messages over. Handlers ack, nak or term each message themselves; a message left
// unacknowledged comes back after the consumer's ack wait, so nothing is lost.
//  - consumeBatches: one batch at a time, in stream order. With `maxWaitMs` 0 a batch is
//    whatever arrived while the previous one was handled (no batching delay on a quiet system);
//    otherwise messages gather until `maxBatch` or every `maxWaitMs` (large inserts): at most
//    one partial batch per tick, however busy the stream. With `tickMs` and `lightBytes`, the
//    ticks come every `tickMs`, and a partial batch whose payloads hold `lightBytes` or more
//    keeps gathering until its oldest message would wait past `maxWaitMs`: a light stream is
//    handed over every tick, a busy one in few large batches.
//  - consumeEach: every message handled as it arrives, concurrently.
import { AckPolicy, DeliverPolicy, type ConsumerConfig, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { Logger } from './logger';
import { ensureConsumer } from './nats';

const NANOS_PER_MS = 1_000_000;
const RESUME_MS = 500;

export interface DurableSpec {
  readonly stream: string;
  readonly name: string;
  readonly filterSubjects: readonly string[];
  readonly maxAckPending: number;
  readonly ackWaitMs: number;
  /** `all` (default): everything the stream holds; `new`: what arrives after the consumer is created. */
  readonly deliver?: 'all' | 'new';
  /** The server removes a consumer nobody pulled from for this long. */
  readonly inactiveMs?: number;
  /** One process at a time receives (PINNED_GROUP): stream order across processes; see PullOptions.pinned. */
  readonly pinned?: boolean;
  /** Deliver each message's headers only, not its body (the charge settler reads a header). */
  readonly headersOnly?: boolean;
}

/**
 * The priority group of a pinned consumer (NATS pinned_client policy): the server delivers to
 * one puller only; the others stand by and one takes over once the pinned one has not pulled
 * for PIN_TTL_MS (a crash). Its unacknowledged messages come back after the ack wait.
 */
const PINNED_GROUP = 'pinned';
const PIN_TTL_MS = 5_000;

export function durableConfig(spec: DurableSpec): Partial<ConsumerConfig> & { durable_name: string } {
  const [only, ...more] = spec.filterSubjects;
  return {
    durable_name: spec.name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: spec.deliver === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
    ...(more.length === 0 && only !== undefined ? { filter_subject: only } : { filter_subjects: [...spec.filterSubjects] }),
    max_ack_pending: spec.maxAckPending,
    ack_wait: spec.ackWaitMs * NANOS_PER_MS,
    ...(spec.inactiveMs === undefined ? {} : { inactive_threshold: spec.inactiveMs * NANOS_PER_MS }),
    ...(spec.headersOnly ? { headers_only: true } : {}),
    ...(spec.pinned ? { priority_groups: [PINNED_GROUP], priority_policy: 'pinned_client' as const, priority_timeout: PIN_TTL_MS * NANOS_PER_MS } : {}),
  };
}

/** Creates the durable consumer, or updates it when an earlier version created it differently. */
export async function ensureDurable(jsm: JetStreamManager, spec: DurableSpec): Promise<void> {
  await ensureConsumer(jsm, spec.stream, durableConfig(spec));
}

interface PullOptions {
  readonly js: JetStreamClient;
  readonly stream: string;
  readonly durable: string;
  /** Messages the client asks the server for at once. */
  readonly pull: number;
  readonly log: Logger;
  /** Called after an interruption, before pulling again (e.g. to recreate the consumer). */
  readonly onInterrupted?: () => Promise<void>;
  /** The durable was made with `pinned` (DurableSpec): pull in its priority group. */
  readonly pinned?: boolean;
}

interface Puller {
  readonly done: Promise<void>;
  stop(): void;
}

/** Pulls until stopped, resuming after interruptions; `take` sees every message once per delivery. */
function pullLoop(options: PullOptions, take: (msg: JsMsg) => Promise<void> | void): Puller {
  let stopped = false;
  let messages: ConsumerMessages | undefined;
  let wake: (() => void) | undefined;
  const pause = (): Promise<void> => new Promise((resolve) => {
    const timer = setTimeout(resolve, RESUME_MS);
    wake = () => { clearTimeout(timer); resolve(); };
  });
  const done = (async () => {
    while (!stopped) {
      try {
        const consumer = await options.js.consumers.get(options.stream, options.durable);
        messages = await consumer.consume(options.pinned ? { max_messages: options.pull, group: PINNED_GROUP } : { max_messages: options.pull });
        if (stopped) {
          messages.stop();
          break;
        }
        for await (const msg of messages) await take(msg);
        if (!stopped) await pause();
      } catch (err) {
        messages?.stop();
        if (stopped) break;
        options.log.warn({ err, consumer: options.durable }, 'consumer interrupted; resuming');
        await options.onInterrupted?.().catch(() => undefined);
        await pause();
      }
    }
  })();
  return {
    done,
    stop: () => {
      stopped = true;
      // stop() ends the iterator at once; awaiting close() can hang when it was never iterated.
      messages?.stop();
      wake?.();
    },
  };
}

export interface BatchOptions extends PullOptions {
  readonly maxBatch: number;
  /** 0: hand over whatever arrived as soon as the previous batch is done; else gather up to this long. */
  readonly maxWaitMs: number;
  /** Gathering: ticks this often instead of every `maxWaitMs` (with `lightBytes`). */
  readonly tickMs?: number;
  /** Gathering with `tickMs`: a partial batch whose payloads hold this many bytes or more waits for later ticks, up to `maxWaitMs`; a lighter one goes at the tick. */
  readonly lightBytes?: number;
  /** Handles a batch; `stopping` is aborted once stop() is called. Must settle every message (or leave it for redelivery). */
  readonly handle: (msgs: JsMsg[], stopping: AbortSignal) => Promise<void>;
  /** Handle what is still buffered when stopping (writers); otherwise it is redelivered later. */
  readonly drainOnStop?: boolean;
}

export interface RunningConsumer {
  stop(): Promise<void>;
}

export function consumeBatches(options: BatchOptions): RunningConsumer {
  const stopping = new AbortController();
  let buffer: JsMsg[] = [];
  /** When each buffered message arrived, and the buffer's payload bytes (with `tickMs`). */
  let arrivals: number[] = [];
  let bufferedBytes = 0;
  let chain: Promise<void> = Promise.resolve();
  let queued = false;

  let draining = false;
  const gathering = options.maxWaitMs > 0;
  const flush = async (): Promise<void> => {
    queued = false;
    let handled = 0;
    while (buffer.length > 0) {
      // Gathering: what arrived while a batch was being handled waits for the next tick unless
      // it fills a batch. Handing it over at once kept a busy writer inserting back to back in
      // small batches (the history writer: ~40 inserts of ~60 rows a second instead of 4).
      if (gathering && !draining && handled > 0 && buffer.length < options.maxBatch) break;
      handled += 1;
      const batch = buffer.splice(0, options.maxBatch);
      if (arrivals.length > 0) {
        arrivals.splice(0, batch.length);
        for (const msg of batch) bufferedBytes -= msg.data.length;
      }
      try {
        await options.handle(batch, stopping.signal);
      } catch (err) {
        options.log.error({ err, consumer: options.durable, streamMessages: batch.length }, 'consumer: batch handler failed; its messages will be delivered again');
      }
    }
  };
  const schedule = (): Promise<void> => {
    if (queued) return chain;
    queued = true;
    chain = chain.then(flush);
    return chain;
  };
  const tickMs = gathering && options.tickMs !== undefined && options.tickMs < options.maxWaitMs ? options.tickMs : undefined;
  const lightBytes = options.lightBytes ?? Number.POSITIVE_INFINITY;
  const tick = (): void => {
    const oldest = arrivals[0];
    if (tickMs === undefined) void schedule();
    // Light, or by the next tick the oldest would have waited longer than maxWaitMs.
    else if (oldest !== undefined && (bufferedBytes < lightBytes || Date.now() - oldest >= options.maxWaitMs - tickMs)) void schedule();
  };
  const timer = gathering ? setInterval(tick, tickMs ?? options.maxWaitMs) : undefined;

  const puller = pullLoop(options, async (msg) => {
    buffer.push(msg);
    if (tickMs !== undefined) {
      arrivals.push(Date.now());
      bufferedBytes += msg.data.length;
    }
    if (options.maxWaitMs === 0) void schedule();
    // Gathering: a full batch holds the reader until it is handled (back-pressure).
    else if (buffer.length >= options.maxBatch) await schedule();
  });

  return {
    stop: async () => {
      stopping.abort();
      if (timer) clearInterval(timer);
      puller.stop();
      await puller.done;
      if (options.drainOnStop) {
        draining = true;
        await schedule();
      }
      else {
        buffer = [];
        arrivals = [];
        bufferedBytes = 0;
        await chain;
      }
    },
  };
}

export interface EachOptions extends PullOptions {
  readonly handle: (msg: JsMsg) => Promise<void>;
}

export interface RunningEach {
  /** Stops pulling; messages being handled go on. */
  stop(): Promise<void>;
  /** Resolves once every message handed over so far is handled. */
  idle(): Promise<void>;
}

export function consumeEach(options: EachOptions): RunningEach {
  const inFlight = new Set<Promise<void>>();
  const puller = pullLoop(options, (msg) => {
    const work = options.handle(msg).catch((err: unknown) => options.log.error({ err, consumer: options.durable, seq: msg.seq }, 'consumer: handler failed; the message will be delivered again'));
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  });
  return {
    stop: async () => {
      puller.stop();
      await puller.done;
    },
    idle: async () => {
      await Promise.allSettled([...inFlight]);
    },
  };
}
