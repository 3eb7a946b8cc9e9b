// The ingest-writer role: one durable JetStream consumer of the INGEST stream that applies
// accepted batches to ClickHouse in stream order and in large batches (DESIGN §3a): contact
// states and the audience, events, permanent event-id deduplication, usage counters, and the
// automation triggers of trigger-worthy events. A stream message is acknowledged only after
// its rows are written, so a crash loses nothing; a replay rewrites the same versions, finds
// its events already stored, and publishes its triggers again under the same msgID, which
// the AUTOMATION stream's duplicate window drops.
import type { JsMsg } from '@nats-io/jetstream';
import { decodeIngest, loadKeyHash, planWrites, touched, type ContactStates, type WriterMessage } from '../core/ingest';
import type { ClickHouse } from '../infra/clickhouse';
import { PipelinedBus } from '../infra/bus/event-bus';
import type { Logger } from '../infra/logger';
import { clickhouseInsertRows, clickhouseRowsWritten, ingestItems, ingestVisibility, ingestWriterPhase } from '../infra/metrics';
import { INGEST_STATE_KEYS, STREAMS, SUBJECTS } from '../core/bus/names';
import { consumeBatches, ensureDurable } from '../infra/consumer';
import type { Nats } from '../infra/nats';
import { AudienceWriter } from '../stores/audience-writer';
import { CONTACT_KEYS, EVENT_KEYS, KeyFilterMemory, StoredKeys } from '../stores/key-filters';
import { observeLag } from './history-metrics';

export const INGEST_CONSUMER = 'ingest-writer';
const BATCH_MESSAGES = 500;
const BATCH_WAIT_MS = 200;
/** Contact states kept in memory between flushes (users); older ones are read again from ClickHouse. */
const STATE_CACHE_USERS = 200_000;

export interface IngestWriter {
  stop(): Promise<void>;
}

export interface IngestWriterOptions {
  /** Memory for the filters of stored keys (INGEST_KEY_FILTER_MB); 0: every lookup reads the tables. */
  readonly keyFilterBytes: number;
}

export async function startIngestWriter(nats: Nats, ch: ClickHouse, log: Logger, options: IngestWriterOptions): Promise<IngestWriter> {
  await ensureDurable(nats.jsm, {
    stream: STREAMS.ingest.name,
    name: INGEST_CONSUMER,
    filterSubjects: [SUBJECTS.ingestAll],
    // Order matters (a delete after an upsert), so at most one run of messages is in flight.
    maxAckPending: 20_000,
    ackWaitMs: 60_000,
  });
  await redeliverHeld(nats, log);
  await loadKeyHash();
  const memory = new KeyFilterMemory(options.keyFilterBytes);
  const writer = new AudienceWriter(ch, { events: new StoredKeys(ch, EVENT_KEYS, memory, log), contacts: new StoredKeys(ch, CONTACT_KEYS, memory, log) });
  // Automation triggers go out through the bus's home (infra/bus/), over the pipelined client.
  const bus = new PipelinedBus(nats.pipeline);
  const states: ContactStates = new Map();

  const apply = async (msgs: readonly JsMsg[]): Promise<void> => {
    let mark = performance.now();
    const phase = (name: string): void => {
      const now = performance.now();
      ingestWriterPhase.observe({ phase: name }, (now - mark) / 1000);
      mark = now;
    };
    const messages: Array<{ seq: number; message: WriterMessage }> = [];
    for (const msg of msgs) {
      try {
        // An `eventRows` frame (its rows serialized by the gateway) or a message of the earlier format.
        messages.push({ seq: msg.seq, message: decodeIngest(msg.data) });
      } catch (err) {
        // Never written by this product's gateway: nothing to apply, nothing to wait for.
        log.error({ err, subject: msg.subject, seq: msg.seq }, 'ingest writer: unreadable stream message terminated');
        msg.term();
      }
    }
    phase('decode');
    const needs = touched(messages);
    await writer.loadStates(states, needs.users);
    const stored = await writer.storedEventKeys(needs.eventKeys);
    const eventsOfDeleted = needs.deleted.length > 0 ? await writer.eventsOf(needs.deleted) : undefined;
    phase('load');
    const plan = planWrites({ messages, states, storedBefore: (ds, id) => stored.has(`${ds}:${id}`), eventsOfDeleted });
    phase('plan');
    // Triggers first: if the rows below fail, the replay publishes them again under the same msgID.
    await Promise.all(plan.triggers.map((t) => bus.publishBytes(SUBJECTS.automationTrigger(t.project), t.data, t.msgId)));
    phase('triggers');
    const written = await writer.write(plan, states);
    phase('write');
    clickhouseRowsWritten.inc({ table: 'audience' }, written.contacts);
    clickhouseRowsWritten.inc({ table: 'events' }, written.events);
    if (written.contacts > 0) clickhouseInsertRows.observe({ table: 'audience' }, written.contacts);
    if (written.events > 0) clickhouseInsertRows.observe({ table: 'events' }, written.events);
    const now = Date.now();
    observeLag('ingest', msgs, now);
    for (const { message } of messages) ingestVisibility.observe(Math.max(0, now - Date.parse(message.receivedAt)) / 1000);
    for (const u of plan.usage) {
      for (const outcome of ['accepted', 'failed', 'duplicates', 'skipped'] as const) if (u[outcome] > 0) ingestItems.inc({ endpoint: u.endpoint, outcome }, u[outcome]);
    }
  };

  const flush = async (fetched: JsMsg[], stopping: AbortSignal): Promise<void> => {
    // A failed run is retried in place (not nak'ed), so later runs never overtake it.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await apply(fetched);
        break;
      } catch (err) {
        states.clear(); // it may hold states of the failed run: ClickHouse is the truth
        log.error({ err, streamMessages: fetched.length, attempt }, 'ingest writer: apply failed; retrying the same run');
        if (stopping.aborted) return; // unacknowledged: delivered again after the restart
        await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 250 * 2 ** attempt)));
        for (const msg of fetched) msg.working();
      }
    }
    for (const msg of fetched) msg.ack();
    await nats.kv.ingestState.put(INGEST_STATE_KEYS.applied, String((fetched.at(-1) as JsMsg).seq));
    if (states.size > STATE_CACHE_USERS) {
      for (const key of states.keys()) {
        states.delete(key);
        if (states.size <= STATE_CACHE_USERS / 2) break;
      }
    }
  };
  // Batches are handled one at a time, in stream order; a failed one is retried in place above.
  const running = consumeBatches({
    js: nats.js, stream: STREAMS.ingest.name, durable: INGEST_CONSUMER, pull: BATCH_MESSAGES * 4, log,
    maxBatch: BATCH_MESSAGES, maxWaitMs: BATCH_WAIT_MS, drainOnStop: true, handle: flush,
  });
  log.info({ consumer: INGEST_CONSUMER }, 'ingest writer running');
  return running;
}

/**
 * A writer that died holding messages (kill -9 between fetching a run and acknowledging it)
 * leaves them pending on the consumer, and the server would deliver them again only after the
 * ack wait, handing newer messages over first: a later request repeating an event id of the
 * held run would then find the id unstored and trigger it a second time under its own msgID
 * (the held run's triggers may have gone out before the kill). Resetting the consumer's
 * delivery to its ack floor (ADR-60, nats-server 2.14+) delivers the held messages again at
 * once and in stream order, so no run is overtaken; what was acknowledged beyond the floor is
 * replayed, which changes nothing. One writer per deployment, so nobody else holds them.
 */
async function redeliverHeld(nats: Nats, log: Logger): Promise<void> {
  const info = await nats.jsm.consumers.info(STREAMS.ingest.name, INGEST_CONSUMER);
  if (info.num_ack_pending === 0) return;
  try {
    await nats.jsm.consumers.reset(STREAMS.ingest.name, INGEST_CONSUMER);
    log.warn({ consumer: INGEST_CONSUMER, held: info.num_ack_pending, from: info.ack_floor.stream_seq + 1 }, 'ingest writer: messages held by a stopped writer delivered again, in order');
  } catch (err) {
    // An older NATS: they come back after the ack wait (later runs may overtake them).
    log.warn({ err, consumer: INGEST_CONSUMER, held: info.num_ack_pending }, 'ingest writer: could not reset the consumer; held messages come back after the ack wait');
  }
}
