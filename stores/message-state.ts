// The current state of recent messages and lookups in the `messages` KV bucket (read-your-
// writes for GET by id at KV speed; DESIGN §3a), clientId claims in `idempotency`, the
// accepted-message queue on JetStream, and opt-outs (a watched mirror of `optouts`).
// The acceptance path's writes and reads go through the process's pipelined JetStream client
// (infra/pipelined-jetstream.ts); accepted messages of concurrent requests share one stream
// message (docs/acceptance.md).
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { decode } from '../core/bus/decode';
import { OutcomeUnknownError } from '../core/errors';
import type { CurrentReader } from '../core/sms/history-ports';
import type { SmsMessage } from '../core/sms/message';
import type { OptOutEntry, OptOutList, OptOutSource } from '../core/sms/opt-out';
import type { AcceptedQueue, ClientIds, MessageStates, OptOutRecorder, OptOuts } from '../core/sms/ports';
import { ACCEPTED_FRAME, BUCKETS, formatHoldRefs, formatSourceCounts, HEADERS, KV_KEYS, SUBJECTS, type HoldRef } from '../core/bus/names';
import { isRevisionConflict } from '../infra/nats';
import { JetStreamPublishError, type PipelinedJetStream } from '../infra/pipelined-jetstream';
import { casKv, kvStream, kvSubject, type CasEntry, type CasKv } from './kv-cas';
import { KvMirror } from './kv-mirror';
import { StateBatches } from './state-batches';
import { StateWrites } from './state-writes';

const MESSAGES_STREAM = kvStream(BUCKETS.messages);
const MESSAGE_ID = /^[0-9a-f-]{36}$/;
const UTF8 = new TextDecoder();

/** Each accepted message is serialized and UTF-8 encoded once: for its KV state and again inside the queued batch. */
const serialized = new WeakMap<SmsMessage, Buffer>();
function encoded(message: SmsMessage): Buffer {
  let bytes = serialized.get(message);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(message));
    serialized.set(message, bytes);
  }
  return bytes;
}

const BATCH_HEAD = Buffer.from(ACCEPTED_FRAME.head);
const BATCH_COMMA = Buffer.from(',');
const BATCH_TAIL = Buffer.from(ACCEPTED_FRAME.tail);

/** `{"messages":[<part>,<part>…]}` from the parts' bytes, without decoding or encoding them again. */
function batchBody(parts: readonly Buffer[], bytes: number): Buffer {
  const chunks: Buffer[] = [BATCH_HEAD];
  parts.forEach((part, i) => {
    if (i > 0) chunks.push(BATCH_COMMA);
    chunks.push(part);
  });
  chunks.push(BATCH_TAIL);
  return Buffer.concat(chunks, BATCH_HEAD.length + BATCH_TAIL.length + bytes + Math.max(0, parts.length - 1));
}

export class KvMessageStates implements MessageStates, CurrentReader<SmsMessage> {
  private readonly batches: StateBatches;
  private readonly writes: StateWrites;

  constructor(private readonly jetstream: PipelinedJetStream) {
    this.batches = new StateBatches((key) => jetstream.lastValue(MESSAGES_STREAM, kvSubject(BUCKETS.messages, key)));
    this.writes = new StateWrites(jetstream, encoded);
  }

  /** One request's new messages (stores/state-writes.ts: one record per request or per turn of single sends). */
  putAll(messages: readonly SmsMessage[]): Promise<void> {
    return this.writes.put(messages);
  }

  /** The message's own state, else its state as accepted in its request's record. */
  async get(id: string): Promise<SmsMessage | null> {
    if (!MESSAGE_ID.test(id)) return null;
    const value = await this.jetstream.lastValue(MESSAGES_STREAM, kvSubject(BUCKETS.messages, KV_KEYS.messageState(id)));
    if (value) return decode('messageState', value);
    const accepted = await this.batches.find(id);
    return accepted ? decode('messageState', accepted) : null;
  }
}

export class KvClientIds implements ClientIds {
  private readonly cas: CasKv;

  constructor(private readonly kv: KV) {
    this.cas = casKv(kv);
  }

  private key(scope: string, clientId: string): string {
    return KV_KEYS.clientIdClaim(scope, createHash('sha256').update(clientId).digest('hex').slice(0, 40));
  }

  async claim(scope: string, clientId: string, messageId: string): Promise<string | null> {
    const key = this.key(scope, clientId);
    try {
      await this.kv.create(key, messageId);
      return null;
    } catch (err) {
      const entry = await this.kv.get(key);
      if (entry && entry.operation === 'PUT' && entry.length > 0) return entry.string();
      throw err;
    }
  }

  async takeOver(scope: string, clientId: string, heldBy: string, messageId: string): Promise<boolean> {
    const key = this.key(scope, clientId);
    const entry = await this.heldBy(key, heldBy);
    if (!entry) return false;
    try {
      await this.cas.update(key, messageId, entry.revision);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  async release(scope: string, clientId: string, messageId: string): Promise<void> {
    const key = this.key(scope, clientId);
    const entry = await this.heldBy(key, messageId);
    if (!entry) return;
    try {
      await this.kv.delete(key, { previousSeq: entry.revision });
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
    }
  }

  /** The claim at `key` when it names `messageId` (with its revision, for a compare-and-set). */
  private async heldBy(key: string, messageId: string): Promise<CasEntry | null> {
    const entry = await this.cas.get(key);
    return entry && UTF8.decode(entry.value) === messageId ? entry : null;
  }
}

interface QueuedBatch {
  readonly parts: Buffer[];
  readonly firstId: string;
  readonly holds: HoldRef[];
  /** Messages per source, for the batch's Sms-Accepted-Sources header. */
  readonly sources: Map<string, number>;
  bytes: number;
  sent: boolean;
  readonly waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

/** Bounds of one coalesced stream message (and half the server's max_payload, 1 MiB by default). */
const MAX_BATCH_MESSAGES = 500;
const MAX_BATCH_BYTES = 512 * 1024;

/**
 * The accepted-message queue: the messages of every request that enqueues within one turn of
 * the event loop go out as one `sms.accepted` stream message, and each request's promise
 * settles with that publish (its ack: stored). Consumers read a batch of any size.
 */
export class JetStreamAcceptedQueue implements AcceptedQueue {
  private open: QueuedBatch | undefined;

  constructor(private readonly jetstream: PipelinedJetStream) {}

  enqueue(messages: readonly SmsMessage[], hold?: HoldRef): Promise<void> {
    const first = messages[0];
    if (!first) return Promise.resolve();
    const parts = messages.map(encoded);
    let bytes = 0;
    for (const p of parts) bytes += p.length;
    let batch = this.open;
    if (batch && (batch.parts.length + parts.length > MAX_BATCH_MESSAGES || batch.bytes + bytes > this.jetstream.bodyLimit(MAX_BATCH_BYTES))) {
      this.send(batch);
      batch = undefined;
    }
    if (!batch) {
      const created: QueuedBatch = { parts: [], firstId: first.id, holds: [], sources: new Map(), bytes: 0, sent: false, waiters: [] };
      this.open = created;
      setImmediate(() => this.send(created));
      batch = created;
    }
    batch.parts.push(...parts);
    batch.bytes += bytes;
    for (const m of messages) batch.sources.set(m.source, (batch.sources.get(m.source) ?? 0) + 1);
    if (hold) batch.holds.push(hold);
    const target = batch;
    return new Promise<void>((resolve, reject) => { target.waiters.push({ resolve, reject }); });
  }

  private send(batch: QueuedBatch): void {
    if (this.open === batch) this.open = undefined;
    if (batch.sent) return;
    batch.sent = true;
    // msgID (the batch's first message) makes a retried publish of the same batch a no-op within the duplicate window.
    const headers: Record<string, string> = { [HEADERS.acceptedSources]: formatSourceCounts(batch.sources) };
    if (batch.holds.length > 0) headers[HEADERS.chargeHolds] = formatHoldRefs(batch.holds);
    this.jetstream.publish(SUBJECTS.smsAccepted, batchBody(batch.parts, batch.bytes), `accepted-${batch.firstId}`, headers).then(
      () => { for (const w of batch.waiters) w.resolve(); },
      (err: unknown) => {
        const reason = err instanceof JetStreamPublishError && err.unconfirmed ? new OutcomeUnknownError(`sms.accepted: ${err.message}`, { cause: err }) : err;
        for (const w of batch.waiters) w.reject(reason);
      },
    );
  }
}

/** What an opt-out key holds (entries written before 2026-11-26 carry `at` alone: a keyword). */
interface StoredOptOut {
  readonly at: string;
  readonly source?: OptOutSource;
  readonly keyword?: string;
}

/**
 * Opt-outs per project in the `optouts` bucket (KV_KEYS.optOut). The list and removals read the
 * bucket itself, so an answer reflects the writes made just before it (the admin CLI uses this
 * class alone; processes that check sends use MirroredOptOuts).
 */
export class KvOptOutList implements OptOutRecorder, OptOutList {
  constructor(protected readonly kv: KV) {}

  static key(projectId: string, number: string): string {
    return KV_KEYS.optOut(projectId, number);
  }

  async optOut(projectId: string, number: string, at: string, source: OptOutSource = 'keyword', keyword?: string): Promise<void> {
    const value: StoredOptOut = keyword === undefined ? { at, source } : { at, source, keyword };
    await this.kv.put(KvOptOutList.key(projectId, number), JSON.stringify(value));
  }

  async optIn(projectId: string, number: string): Promise<boolean> {
    const key = KvOptOutList.key(projectId, number);
    const entry = await this.kv.get(key);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return false;
    await this.kv.delete(key);
    return true;
  }

  async list(projectId: string, page: { readonly start: number; readonly limit: number }): Promise<OptOutEntry[]> {
    const prefix = `${projectId}.`;
    const keys: string[] = [];
    for await (const key of await this.kv.keys(`${prefix}*`)) keys.push(key);
    keys.sort();
    const entries = await Promise.all(keys.slice(page.start, page.start + page.limit).map(async (key): Promise<OptOutEntry | null> => {
      const entry = await this.kv.get(key);
      if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
      let stored: StoredOptOut;
      try {
        stored = entry.json<StoredOptOut>();
      } catch {
        return null;
      }
      const base = { number: `+${key.slice(prefix.length)}`, since: stored.at, source: stored.source ?? 'keyword' } as const;
      return stored.keyword === undefined ? base : { ...base, keyword: stored.keyword };
    }));
    return entries.filter((e): e is OptOutEntry => e !== null);
  }
}

/** The opt-outs with sends checked against a watched mirror of the bucket (no round trip per send). */
export class MirroredOptOuts extends KvOptOutList implements OptOuts {
  private constructor(kv: KV, private readonly mirror: KvMirror) {
    super(kv);
  }

  static async open(kv: KV): Promise<MirroredOptOuts> {
    return new MirroredOptOuts(kv, await KvMirror.open(kv));
  }

  isOptedOut(projectId: string, number: string): boolean {
    return this.mirror.has(KvOptOutList.key(projectId, number));
  }

  stop(): void {
    this.mirror.stop();
  }
}
