// The accepted-message queue on JetStream (`sms.accepted`): the messages of every request that
// enqueues within one turn of the event loop share one stream message, published through the
// process's pipelined JetStream client (../pipelined-jetstream.ts; docs/acceptance.md).
import { OutcomeUnknownError } from '../../core/errors';
import type { AcceptedQueue, SmsMessage } from '../../core/sms';
import { ACCEPTED_FRAME, formatHoldRefs, formatSourceCounts, HEADERS, SUBJECTS, type HoldRef } from '../../core/bus/names';
import { JetStreamPublishError, type PipelinedJetStream } from '../pipelined-jetstream';

/**
 * A publish the bus took but did not confirm (no ack in time, the publisher closed) may be
 * stored: OutcomeUnknownError `<subject>: <reason>`, so a charge for it stays held for the charge
 * settler. Any other error (a refusal the bus answered) is returned as it is.
 */
export function unconfirmedAsUnknown(subject: string, err: unknown): unknown {
  return err instanceof JetStreamPublishError && err.unconfirmed ? new OutcomeUnknownError(`${subject}: ${err.message}`, { cause: err }) : err;
}

/** Each accepted message is serialized and UTF-8 encoded once: for its KV state and again inside the queued batch. */
const serialized = new WeakMap<SmsMessage, Buffer>();
export function encodedMessage(message: SmsMessage): Buffer {
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
    const parts = messages.map(encodedMessage);
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
        const reason = unconfirmedAsUnknown(SUBJECTS.smsAccepted, err);
        for (const w of batch.waiters) w.reject(reason);
      },
    );
  }
}
