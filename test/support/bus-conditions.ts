// Conditions on the stack's bus that show how far the asynchronous pipelines got, so that a test
// proves "nothing (more) happened" by a point the system has provably processed past, not by a
// fixed wait: the ingest writer's applied INGEST sequence (KV ingest_state), a durable consumer's
// ack floor.
import { CONSUMERS, INGEST_STATE_KEYS, STREAMS, SUBJECTS } from '../../core/bus';
import { eventually } from '../../support/eventually';
import { withAccounts } from '../../support/tenants';

/**
 * Waits until the ingest writer has applied everything on the INGEST stream now (its applied
 * sequence, written after the rows are in ClickHouse, reaches the stream's last sequence), and
 * returns that sequence. Every request answered before the call is then visible to reads.
 */
export async function ingestWriterCaughtUp(what: string, timeoutMs = 30_000): Promise<number> {
  return withAccounts(async (_accounts, _balances, nats) => {
    const last = (await nats.jsm.streams.info(STREAMS.ingest.name)).state.last_seq;
    await eventually(async () => Number((await nats.kv.ingestState.get(INGEST_STATE_KEYS.applied))?.string() || 0), {
      what: `the ingest writer to apply INGEST sequence ${last} (${what})`,
      until: (applied) => applied >= last,
      timeoutMs,
    });
    return last;
  });
}

/**
 * Waits until the durable `consumer` of `stream` has acknowledged every stream message up to
 * `seq` (its ack floor reached it): whatever that consumer does with those messages is done.
 */
export async function consumerPassed(stream: string, consumer: string, seq: number, what: string, timeoutMs = 30_000): Promise<void> {
  await withAccounts(async (_accounts, _balances, nats) => {
    await eventually(async () => (await nats.jsm.consumers.info(stream, consumer)).ack_floor.stream_seq, {
      what: `consumer ${consumer} of ${stream} to acknowledge sequence ${seq} (${what})`,
      until: (floor) => floor >= seq,
      timeoutMs,
    });
  });
}

/**
 * Waits until the history writer has inserted everything on the SMS stream now (its durable
 * consumer acknowledges a stream message only after its rows are in ClickHouse), so that GET
 * /sms lists whatever was accepted before the call, and only that.
 */
export async function historyWriterCaughtUp(what: string, timeoutMs = 30_000): Promise<void> {
  const last = await withAccounts(async (_accounts, _balances, nats) => (await nats.jsm.streams.info(STREAMS.sms.name)).state.last_seq);
  await consumerPassed(STREAMS.sms.name, CONSUMERS.historyWriter, last, what, timeoutMs);
}

/**
 * The SMS stream sequence of the status message that carries `messageId`'s transition to
 * `status` for `tokenId` (published by the lifecycle after it stored the state), waited for.
 */
export async function statusSequence(tokenId: string, messageId: string, status: string, timeoutMs = 30_000): Promise<number> {
  return withAccounts(async (_accounts, _balances, nats) => eventually(async () => {
    const consumer = await nats.js.consumers.get(STREAMS.sms.name, { filter_subjects: [SUBJECTS.smsStatus(tokenId)] });
    let pending = (await consumer.info()).num_pending;
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, 500), expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        got += 1;
        const payload = m.json<{ transitions: Array<{ messageId: string; status: string }> }>();
        if (payload.transitions.some((t) => t.messageId === messageId && t.status === status)) return m.seq;
      }
      if (got === 0) break;
      pending -= got;
    }
    return null;
  }, { what: `the ${status} status of ${messageId} on sms.status.${tokenId}`, until: (seq) => seq !== null, timeoutMs, intervalMs: 200 }) as Promise<number>);
}
