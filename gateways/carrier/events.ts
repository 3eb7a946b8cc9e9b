// Writing what the connector learned: carrier.events and carrier.inbound on JetStream (with
// msgIDs, so repeats within the duplicate window are stored once) and the carrierIds records
// that let a receipt find its message. A write that must not be lost is retried until it
// succeeds or the connector stops (StopError). Publishes, puts and gets go through the
// process's pipelined JetStream client (infra/pipelined-jetstream.ts): no request object,
// timer and Error per call, the client library's cost at a few calls per segment.
import { BUCKETS, decode, SUBJECTS, type CarrierIdEntry } from '../../core/bus';
import type { CarrierEvent, CarrierInbound } from '../../core/carrier';
import type { Logger } from '../../infra/logger';
import type { Nats } from '../../infra/nats';
import { CarrierEventBatcher } from './event-batch';
import { carrierIdKey } from './rules';

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 10_000;
const LOOKUP_ATTEMPTS = 4;
const LOOKUP_RETRY_MS = 250;
const RECENT_IDS = 100_000;
const CARRIER_IDS_STREAM = `KV_${BUCKETS.carrierIds}`;
const carrierIdSubject = (key: string): string => `$KV.${BUCKETS.carrierIds}.${key}`;

export type { CarrierIdEntry } from '../../core/bus';

export class StopError extends Error {
  override readonly name = 'StopError';
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Doubles a retry delay up to the ceiling. */
export const backoff = (ms: number): number => Math.min(ms * 2, RETRY_MAX_MS);
export const FIRST_RETRY_MS = RETRY_MIN_MS;

export class CarrierWriter {
  /** Records being written for fresh carrier ids (KV put + submitted event). */
  private readonly recording = new Map<string, Promise<void>>();
  /** Entries this process recorded lately: most receipts come back to the bind that submitted. */
  private readonly recent = new Map<string, CarrierIdEntry>();

  /** carrier.events: the events of one turn in one stream message (./event-batch.ts). */
  private readonly events: CarrierEventBatcher;

  constructor(private readonly nats: Nats, private readonly log: Logger, private readonly signal: AbortSignal) {
    this.events = new CarrierEventBatcher((data, msgID) => this.nats.pipeline.publish(SUBJECTS.carrierEvents, data, msgID));
  }

  /** Writes one event to carrier.events (`key`: its dedupe key); resolves once the stream has it. */
  publishEvent(event: CarrierEvent, key: string): Promise<void> {
    return this.events.add(event, key);
  }

  async publishInbound(inbound: CarrierInbound): Promise<void> {
    await this.nats.pipeline.publish(SUBJECTS.carrierInbound, JSON.stringify(inbound), inbound.inboundId);
  }

  /** Retries a write until it succeeds; a write that can not be lost must not fail the caller. */
  async persist(what: string, write: () => Promise<unknown>): Promise<void> {
    let wait = RETRY_MIN_MS;
    for (;;) {
      try {
        await write();
        return;
      } catch (err) {
        if (this.signal.aborted) throw new StopError(`stopped while writing ${what}`, { cause: err });
        this.log.warn({ err, what }, 'carrier: write failed; retrying');
        await sleep(wait, this.signal);
        wait = backoff(wait);
      }
    }
  }

  /** Records a fresh carrier id, then `after` (the submitted event); lookups of the id wait for both. */
  record(route: string, carrierMessageId: string, entry: CarrierIdEntry, after: () => Promise<void>): Promise<void> {
    const key = carrierIdKey(route, carrierMessageId);
    const work = (async () => {
      await this.persist('carrierIds', () => this.nats.pipeline.publish(carrierIdSubject(key), JSON.stringify(entry)));
      this.remember(key, entry);
      await after();
    })();
    this.recording.set(key, work);
    void work.catch(() => undefined).finally(() => this.recording.delete(key));
    return work;
  }

  /** The record of the first of `ids` that has one, retried briefly for a receipt that overtook its record. */
  async lookup(route: string, ids: readonly string[]): Promise<{ id: string; entry: CarrierIdEntry } | undefined> {
    for (let attempt = 0; attempt < LOOKUP_ATTEMPTS; attempt++) {
      for (const id of ids) {
        const key = carrierIdKey(route, id);
        await this.recording.get(key)?.catch(() => undefined);
        const known = this.recent.get(key);
        if (known) return { id, entry: known };
        const found = await this.nats.pipeline.lastValue(CARRIER_IDS_STREAM, carrierIdSubject(key));
        if (found) return { id, entry: decode('carrierId', found) };
      }
      if (attempt + 1 < LOOKUP_ATTEMPTS) await sleep(LOOKUP_RETRY_MS, this.signal);
    }
    return undefined;
  }

  private remember(key: string, entry: CarrierIdEntry): void {
    this.recent.set(key, entry);
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.keys().next().value ?? key);
  }
}
