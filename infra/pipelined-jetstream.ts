// JetStream publishes and KV reads on the acceptance path without a request object per call:
// each goes out with a reply subject under one inbox subscription of this client, and its
// answer settles a waiter found by the reply subject's suffix. The client library's own
// `js.publish` / `kv.put` / `kv.get` build a request, a mux entry, a timer and an Error per
// call — about three times the CPU of this path (docs/acceptance.md). The semantics are the
// same: a publish resolves only once the stream has stored the message (its PubAck), and
// rejects on an API error, on "no responders" (no stream listens) and after `timeoutMs`.
import { createInbox, Empty, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/**
 * The largest message body to publish in one piece to a server taking `maxPayload` bytes: half
 * of it (headers and protocol ride along), at most `cap` (unknown max_payload: `cap`).
 */
export function bodyLimitOf(maxPayload: number | undefined, cap: number): number {
  return maxPayload ? Math.min(cap, Math.floor(maxPayload / 2)) : cap;
}

export class JetStreamPublishError extends Error {
  override readonly name = 'JetStreamPublishError';

  constructor(message: string, readonly code?: number, readonly errCode?: number, readonly unconfirmed = false) {
    super(message);
  }
}

/** A KV value read by a direct get, with its revision (the stream sequence). */
export interface StoredValue {
  readonly data: Uint8Array;
  readonly revision: number;
}

export interface PubAck {
  readonly stream: string;
  readonly seq: number;
  readonly duplicate: boolean;
}

interface Waiter {
  readonly resolve: (msg: Msg) => void;
  readonly reject: (err: Error) => void;
  readonly deadline: number;
}

interface AckBody {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; err_code?: number; description?: string };
}

const DEFAULT_TIMEOUT_MS = 5000;

function toPubAck(msg: Msg): PubAck {
  if (msg.data.length === 0) throw new JetStreamPublishError(`publish failed with status ${msg.headers?.code ?? 0}`, msg.headers?.code);
  let body: AckBody;
  try {
    body = JSON.parse(utf8.decode(msg.data)) as AckBody;
  } catch {
    throw new JetStreamPublishError('unreadable publish acknowledgement');
  }
  if (body.error) throw new JetStreamPublishError(body.error.description ?? 'publish refused', body.error.code, body.error.err_code);
  if (!body.stream) throw new JetStreamPublishError('invalid publish acknowledgement');
  return { stream: body.stream, seq: body.seq ?? 0, duplicate: body.duplicate === true };
}
const utf8 = new TextDecoder();

export class PipelinedJetStream {
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly waiting = new Map<number, Waiter>();
  private next = 0;
  private readonly sweeper: NodeJS.Timeout;
  private outbox: Array<{ id: number; subject: string; data: Uint8Array | string; headers: MsgHdrs | undefined }> = [];
  private flushScheduled = false;

  /**
   * `leaderReads`: read KV entries through the stream leader (`STREAM.MSG.GET`) instead of a
   * direct get, which any replica of an R3 stream may answer before it applied the last write
   * (infra/nats.ts sets it on a cluster, for read-your-writes across processes).
   */
  constructor(private readonly nc: NatsConnection, private readonly timeoutMs = DEFAULT_TIMEOUT_MS, private readonly leaderReads = false) {
    this.prefix = `${createInbox()}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => { if (!err) this.settle(msg); } });
    // One timer for every waiter instead of one per publish.
    this.sweeper = setInterval(() => this.expire(), Math.min(1000, timeoutMs)).unref();
  }

  /**
   * Publishes `data` on `subject` and resolves with the stream's ack. `msgId` sets Nats-Msg-Id
   * (deduplication); `extra` adds headers of the product's own (core/bus/names.ts HEADERS).
   */
  async publish(subject: string, data: Uint8Array | string, msgId?: string, extra?: Readonly<Record<string, string>>): Promise<PubAck> {
    let headers: MsgHdrs | undefined;
    if (msgId !== undefined || extra !== undefined) {
      headers = natsHeaders();
      if (msgId !== undefined) headers.set('Nats-Msg-Id', msgId);
      if (extra) for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    }
    return toPubAck(await this.request(subject, data, headers));
  }

  /**
   * A compare-and-set: stores `data` on `subject` only if the subject's last message is
   * `revision` (0: the subject has none, a KV create). A lost race rejects with the
   * stream's "wrong last sequence" error (isRevisionConflict in infra/nats.ts).
   */
  async publishIfLast(subject: string, data: Uint8Array | string, revision: number): Promise<PubAck> {
    const headers = natsHeaders();
    headers.set('Nats-Expected-Last-Subject-Sequence', String(revision));
    return toPubAck(await this.request(subject, data, headers));
  }

  /**
   * The last value stored under `subject` in `stream` (a KV key: stream `KV_<bucket>`, subject
   * `$KV.<bucket>.<key>`) by a direct get, or null when there is none or it is a delete marker.
   */
  async lastValue(stream: string, subject: string): Promise<Uint8Array | null> {
    const entry = await this.lastEntry(stream, subject);
    return entry && entry.data.length > 0 ? entry.data : null;
  }

  /**
   * lastValue with the entry's revision, for a compare-and-set (publishIfLast); a delete or
   * purge marker is an entry with an empty body (its revision is the one to replace).
   */
  async lastEntry(stream: string, subject: string): Promise<StoredValue | null> {
    if (this.leaderReads) return this.leaderEntry(stream, subject);
    const msg = await this.request(`$JS.API.DIRECT.GET.${stream}.${subject}`, Empty);
    const code = msg.headers?.code ?? 0;
    if (code === 404) return null;
    if (code !== 0) throw new JetStreamPublishError(`direct get failed with status ${code} ${msg.headers?.description ?? ''}`.trim(), code);
    return { data: msg.data, revision: Number(msg.headers?.get('Nats-Sequence') ?? 0) };
  }

  private async leaderEntry(stream: string, subject: string): Promise<StoredValue | null> {
    const msg = await this.request(`$JS.API.STREAM.MSG.GET.${stream}`, JSON.stringify({ last_by_subj: subject }));
    let body: { message?: { seq?: number; data?: string }; error?: { code?: number; err_code?: number; description?: string } };
    try {
      body = JSON.parse(utf8.decode(msg.data)) as typeof body;
    } catch {
      throw new JetStreamPublishError(`message get failed with status ${msg.headers?.code ?? 0}`, msg.headers?.code);
    }
    if (body.error?.err_code === 10037) return null; // no message found (the subject has none)
    if (body.error || !body.message) throw new JetStreamPublishError(body.error?.description ?? 'message get refused', body.error?.code, body.error?.err_code);
    const data = body.message.data ? Buffer.from(body.message.data, 'base64') : new Uint8Array(0);
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), revision: body.message.seq ?? 0 };
  }

  private request(subject: string, data: Uint8Array | string, headers?: MsgHdrs): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      const id = ++this.next;
      this.waiting.set(id, { resolve, reject, deadline: Date.now() + this.timeoutMs });
      this.outbox.push({ id, subject, data, headers });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flushOutbox);
      }
    });
  }

  /**
   * Requests made during one turn of the event loop go to the connection together, so the
   * client writes them to its socket in one write instead of one per promise continuation.
   */
  private readonly flushOutbox = (): void => {
    this.flushScheduled = false;
    const outbox = this.outbox;
    this.outbox = [];
    for (const { id, subject, data, headers } of outbox) {
      try {
        this.nc.publish(subject, data, headers ? { reply: `${this.prefix}${id}`, headers } : { reply: `${this.prefix}${id}` });
      } catch (err) {
        const waiter = this.waiting.get(id);
        this.waiting.delete(id);
        waiter?.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
  };

  /** The largest message body this client may publish in one piece: bodyLimitOf the connected server's max_payload. */
  bodyLimit(cap: number): number {
    return bodyLimitOf(this.nc.info?.max_payload, cap);
  }

  /** Stops listening; publishes still waiting are rejected. */
  close(): void {
    clearInterval(this.sweeper);
    this.sub.unsubscribe();
    for (const waiter of this.waiting.values()) waiter.reject(new JetStreamPublishError('the publisher was closed before the ack arrived', undefined, undefined, true));
    this.waiting.clear();
  }

  private settle(msg: Msg): void {
    const id = Number(msg.subject.slice(this.prefix.length));
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    // 503: nobody answers on the subject (no stream stores it, JetStream unavailable).
    if (msg.headers?.code === 503) waiter.reject(new JetStreamPublishError('no responders: no stream stores this subject, or JetStream is unavailable', 503));
    else waiter.resolve(msg);
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, waiter] of this.waiting) {
      if (waiter.deadline > now) continue;
      this.waiting.delete(id);
      waiter.reject(new JetStreamPublishError(`no publish acknowledgement within ${this.timeoutMs} ms`, undefined, undefined, true));
    }
  }
}
