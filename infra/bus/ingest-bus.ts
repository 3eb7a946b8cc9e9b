// The gateway's side of the INGEST stream: one JetStream publish per accepted request (the
// 202 is sent only after the stream has it on disk), and a wait for the ingest writer's
// progress so that a DELETE answers once the contact is gone from every query.
// A request whose message is larger than the bus carries in one piece (MESSAGE_CAP, and half
// the connected server's max_payload: an operator's NATS may take less than ours) goes as
// several messages in order, each with whole items; an item too large on its own is a 413
// before anything is published. The bus also keeps the writer's lag as this gateway sees it
// (the age of its oldest published message the writer has not applied, from the applied
// sequence in KV `ingest_state`), which the API turns into back-pressure (a 429 past a limit).
import type { KV } from '@nats-io/kv';
import { encodeEventRows, packParts, type IngestContactsMessage, type IngestMessage } from '../../core/ingest';
import type { IngestBus, IngestLag } from '../../core/ingest/ports';
import { INGEST_STATE_KEYS, SUBJECTS } from '../../core/bus/names';
import { ingestLag } from '../metrics';
import { bodyLimitOf } from '../pipelined-jetstream';

/** How often the applied sequence is read while some publish is not applied yet. */
export const APPLIED_POLL_MS = 200;
/** Unapplied publishes remembered at most (the oldest dropped beyond: the lag then reads lower than it is). */
const MAX_TRACKED = 200_000;

/**
 * The largest INGEST message, at most half the server's max_payload: the writer publishes a
 * request's automation triggers (its events again, with an audience id each) as one message,
 * which must fit too (an `eventRows` frame's triggers message is at most about 1.7 times the
 * frame, for the smallest events: test/unit/ingest-event-rows.test.ts).
 */
export const MESSAGE_CAP = 512 * 1024;

/**
 * What the bus publishes with: the pipelined client of the hot paths (infra/pipelined-jetstream.ts,
 * no request object, timer or Error per call; publishes of one event-loop turn in one socket
 * write) or the library's JetStream client. Either resolves once the stream has stored the message.
 */
export interface StreamPublisher {
  publish(subject: string, data: Uint8Array): Promise<{ readonly seq: number }>;
}

/**
 * A contacts `message` as several messages of at most `limit` bytes each, contacts in order
 * (events go as `eventRows` frames, split the same way by core/ingest/event-rows.ts). The first
 * part carries the request's failed count; later parts are numbered (`part`), so the writer counts
 * the request once. Throws PAYLOAD_TOO_LARGE if one contact does not fit on its own.
 */
export function splitIngestMessage(message: IngestContactsMessage, limit: number): Buffer[] {
  const frame = (contacts: IngestContactsMessage['contacts'], part: number): IngestContactsMessage =>
    ({ ...message, contacts, failed: part === 0 ? message.failed : 0, ...(part > 0 ? { part } : {}) });
  // The largest frame (a part number of three digits) with no contact, and a comma per contact.
  const groups = packParts(message.contacts, Buffer.byteLength(JSON.stringify(frame([], 999))), limit,
    (contact) => Buffer.byteLength(JSON.stringify(contact)) + 1, (contact) => `the contact "${contact.userId}"`);
  return groups.map((contacts, part) => Buffer.from(JSON.stringify(frame(contacts, part))));
}

export class JetStreamIngestBus implements IngestBus {
  /** This gateway's publishes the writer has not applied yet, in stream order: sequence and reception time (ms). */
  private readonly unapplied: Array<{ seq: number; at: number }> = [];
  private head = 0;
  private applied = 0;
  private poller: NodeJS.Timeout | undefined;

  /** `maxPayload`: the connected server's max_payload (the connection's server info), read at each publish. */
  constructor(private readonly js: StreamPublisher, private readonly state: KV, private readonly maxPayload: () => number | undefined = () => undefined,
    private readonly clock: () => number = Date.now) {}

  /** The writer's lag behind this gateway: the age of the oldest message it published that is not applied yet. */
  lag(): IngestLag {
    this.dropApplied();
    const oldest = this.unapplied[this.head];
    const lag = { seconds: oldest ? Math.max(0, this.clock() - oldest.at) / 1000 : 0, unapplied: this.unapplied.length - this.head };
    ingestLag.set(lag.seconds);
    return lag;
  }

  /** Stops reading the applied sequence (the process is stopping). */
  close(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }

  private remember(seq: number, receivedAt: string): void {
    if (this.unapplied.length - this.head >= MAX_TRACKED) this.head += 1;
    this.unapplied.push({ seq, at: Date.parse(receivedAt) });
    this.poller ??= setInterval(() => { void this.poll(); }, APPLIED_POLL_MS).unref();
  }

  /** Reads the applied sequence; stops polling once everything published is applied. */
  async poll(): Promise<void> {
    try {
      const entry = await this.state.get(INGEST_STATE_KEYS.applied);
      if (entry && entry.operation === 'PUT') this.applied = Math.max(this.applied, Number(entry.string()));
    } catch {
      // the connection is down: the lag keeps growing until the next read
    }
    this.lag();
    if (this.head >= this.unapplied.length) this.close();
  }

  private dropApplied(): void {
    while (this.head < this.unapplied.length && (this.unapplied[this.head] as { seq: number }).seq <= this.applied) this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.unapplied.length) {
      this.unapplied.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Publishes the message (in parts when it is too large for one) and returns the stream sequence of the last once stored. */
  async publish(message: IngestMessage): Promise<number> {
    const subject = message.kind === 'contacts' ? SUBJECTS.ingestContacts(message.projectId, message.datasourceId)
      : message.kind === 'events' ? SUBJECTS.ingestEvents(message.projectId, message.datasourceId)
        : message.kind === 'delete' ? SUBJECTS.ingestDelete(message.projectId, message.datasourceId)
          : SUBJECTS.ingestRejected(message.projectId, message.datasourceId);
    const limit = bodyLimitOf(this.maxPayload(), MESSAGE_CAP);
    let seq = 0;
    if (message.kind === 'events') {
      // Events go as `eventRows` frames: their rows serialized once, here (core/ingest/event-rows.ts).
      for (const part of encodeEventRows(message, limit)) seq = (await this.js.publish(subject, part)).seq;
      this.remember(seq, message.receivedAt);
      return seq;
    }
    const data = Buffer.from(JSON.stringify(message));
    if (data.length <= limit || message.kind !== 'contacts') seq = (await this.js.publish(subject, data)).seq;
    else {
      // Every part is built (and an item too large refused) before the first is published.
      const parts = splitIngestMessage(message, limit);
      for (const part of parts) seq = (await this.js.publish(subject, part)).seq;
    }
    this.remember(seq, message.receivedAt);
    return seq;
  }

  /** Resolves true once the ingest writer has applied stream sequence `seq`, false after `timeoutMs`. */
  async waitApplied(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const entry = await this.state.get(INGEST_STATE_KEYS.applied);
      if (entry && entry.operation === 'PUT') {
        const applied = Number(entry.string());
        this.applied = Math.max(this.applied, applied);
        if (applied >= seq) return true;
      }
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
