// The pipelined JetStream client (infra/pipelined-jetstream.ts) against the test stack's
// nats-server: acks mean stored, refusals and lost compare-and-sets are errors; and the stores
// built on it keep balances and rate limits exact when two replicas (two connections, as two
// gateway processes) charge and count one organization at once.
import { randomUUID } from 'node:crypto';
import { BUCKETS } from '../../core/bus/names';
import { createLogger } from '../../infra/logger';
import { connectNats, isRevisionConflict, type Nats } from '../../infra/nats';
import { JetStreamPublishError, PipelinedJetStream } from '../../infra/pipelined-jetstream';
import { BalanceLedger } from '../../stores/balance-ledger';
import { RateLimiter } from '../../stores/rate-limiter';
import { stack } from '../../support/stack';

const KV_STREAM = `KV_${BUCKETS.ratelimits}`;
const subject = (key: string): string => `$KV.${BUCKETS.ratelimits}.${key}`;
const text = (data: Uint8Array | null | undefined): string | undefined => (data ? new TextDecoder().decode(data) : undefined);

describe('pipelined JetStream client and the replicated compare-and-set stores', () => {
  let a: Nats;
  let b: Nats;

  beforeAll(async () => {
    const open = (name: string): Promise<Nats> => connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name }, createLogger('error'));
    [a, b] = await Promise.all([open('pipelined-a'), open('pipelined-b')]);
  });

  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  test('a publish resolves with the stored sequence, and the value is read back by a direct get with its revision', async () => {
    const key = `test.${randomUUID()}`;
    const ack = await a.pipeline.publish(subject(key), '41');
    expect(ack.stream).toBe(KV_STREAM);
    expect(ack.seq).toBeGreaterThan(0);
    const entry = await b.pipeline.lastEntry(KV_STREAM, subject(key));
    expect({ value: text(entry?.data), revision: entry?.revision }).toEqual({ value: '41', revision: ack.seq });
    expect(text(await b.pipeline.lastValue(KV_STREAM, subject(key)))).toBe('41');
    // The library's KV reads the same entry.
    expect((await b.kv.ratelimits.get(key))?.string()).toBe('41');
  });

  test('a missing key reads null; a deleted key reads null by value and as an empty entry with its revision', async () => {
    const key = `test.${randomUUID()}`;
    expect(await a.pipeline.lastEntry(KV_STREAM, subject(key))).toBeNull();
    await a.kv.ratelimits.put(key, '1');
    await a.kv.ratelimits.delete(key);
    expect(await a.pipeline.lastValue(KV_STREAM, subject(key))).toBeNull();
    const marker = await a.pipeline.lastEntry(KV_STREAM, subject(key));
    expect(marker?.data.length).toBe(0);
    expect(marker?.revision).toBeGreaterThan(0);
  });

  test('a publish no stream stores is refused (no responders), never acknowledged, and known not stored', async () => {
    const refused = await a.pipeline.publish(`no.stream.here.${randomUUID()}`, 'x').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(JetStreamPublishError);
    expect(refused).toMatchObject({ code: 503, unconfirmed: false });
  });

  test('a publish taken but never acknowledged times out as unconfirmed (it may be stored), so a charge for it is not refunded on the spot', async () => {
    const subjectTaken = `taken.never.acked.${randomUUID()}`;
    const silent = a.nc.subscribe(subjectTaken, { callback: () => undefined });
    const pipeline = new PipelinedJetStream(a.nc, 300);
    try {
      const lost = await pipeline.publish(subjectTaken, 'x').catch((err: unknown) => err);
      expect(lost).toBeInstanceOf(JetStreamPublishError);
      expect(lost).toMatchObject({ unconfirmed: true });
      expect((lost as Error).message).toMatch(/no publish acknowledgement within 300 ms/);
    } finally {
      pipeline.close();
      silent.unsubscribe();
    }
  });

  test('Nats-Msg-Id: the same id published twice is stored once', async () => {
    const key = `test.${randomUUID()}`;
    const id = randomUUID();
    const first = await a.pipeline.publish(subject(key), '1', id);
    const again = await b.pipeline.publish(subject(key), '1', id);
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ stream: KV_STREAM, seq: first.seq, duplicate: true });
  });

  test('compare-and-set: only the expected revision wins; a stale one and a second create are revision conflicts', async () => {
    const key = `test.${randomUUID()}`;
    const created = await a.pipeline.publishIfLast(subject(key), '1', 0);
    const lostCreate = await b.pipeline.publishIfLast(subject(key), '1', 0).then(() => undefined, (err: unknown) => err);
    expect(isRevisionConflict(lostCreate)).toBe(true);
    const updated = await b.pipeline.publishIfLast(subject(key), '2', created.seq);
    const stale = await a.pipeline.publishIfLast(subject(key), '3', created.seq).then(() => undefined, (err: unknown) => err);
    expect(isRevisionConflict(stale)).toBe(true);
    expect(text(await a.pipeline.lastValue(KV_STREAM, subject(key)))).toBe('2');
    expect(updated.seq).toBeGreaterThan(created.seq);
  });

  test('two replicas charging one organization at once: every charge judged once, the balance exact, never below zero', async () => {
    const orgId = randomUUID();
    const ledgers = [new BalanceLedger(a.kv.balances, a.pipeline), new BalanceLedger(b.kv.balances, b.pipeline)];
    await ledgers[0]?.set(orgId, { currency: 'EUR', availableMicros: 1_000 });
    // 150 charges of 10 from each replica: exactly 100 of the 300 fit.
    const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => (ledgers[i % 2] as BalanceLedger).charge(orgId, 10)));
    expect(outcomes.filter(Boolean)).toHaveLength(100);
    expect((await ledgers[1]?.get(orgId))?.availableMicros).toBe(0);
    // Credits from both replicas add up exactly too.
    await Promise.all(Array.from({ length: 40 }, (_, i) => (ledgers[i % 2] as BalanceLedger).credit(orgId, 25)));
    expect((await ledgers[0]?.get(orgId))?.availableMicros).toBe(1_000);
  });

  test('a replica\'s remembered balance never decides alone: a top-up and a hold made by the other replica are seen', async () => {
    const orgId = randomUUID();
    const [one, other] = [new BalanceLedger(a.kv.balances, a.pipeline), new BalanceLedger(b.kv.balances, b.pipeline)];
    await one.set(orgId, { currency: 'EUR', availableMicros: 100 });
    expect(await one.charge(orgId, 100)).toBe(true);
    // `one` remembers 0 left; the other replica tops up and holds a charge of its own.
    await other.set(orgId, { currency: 'EUR', availableMicros: 500 });
    expect(await other.charge(orgId, 50, { id: 'held-by-other' })).toBe(true);
    // A charge the remembered balance would refuse is judged on the stored one.
    expect(await one.charge(orgId, 400)).toBe(true);
    // A hold the remembered balance does not have is found and settled.
    await one.settleAll(orgId, ['held-by-other']);
    expect(await one.get(orgId)).toEqual({ currency: 'EUR', availableMicros: 50 });
    expect(await one.charge(orgId, 51)).toBe(false);
  });

  test('two replicas counting one rate limit at once: exactly the limit is allowed, across both', async () => {
    const scope = randomUUID();
    const limiters = [new RateLimiter(a.kv.ratelimits, Date.now, a.pipeline), new RateLimiter(b.kv.ratelimits, Date.now, b.pipeline)];
    const decisions = await Promise.all(Array.from({ length: 150 }, (_, i) => (limiters[i % 2] as RateLimiter).take(scope, 'v1-sms-create', 60)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
    const remaining = decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((x, y) => x - y);
    // Each admitted request saw its own place in the window: 59, 58, … 0, each once.
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });
});
