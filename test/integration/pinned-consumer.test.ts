// A pinned durable consumer (infra/consumer.ts, NATS pinned_client priority group) on the real
// nats-server: with two processes pulling, one receives everything in stream order; when its
// connection dies, the other takes over within the pin's timeout and nothing is lost or taken
// twice. Messages the server had already sent to the dying process come back after the ack wait
// (docs/decisions.md), so they can arrive after later ones: the takeover keeps every message,
// not their order (a CI run caught that race; the test once asserted order there). The
// carrier-events bridge relies on it (docs/decisions.md, issue 18).
import { randomUUID } from 'node:crypto';
import type { JsMsg } from '@nats-io/jetstream';
import { consumeBatches, ensureDurable, type RunningConsumer } from '../../infra/consumer';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { eventually } from '../../support/eventually';
import { stack } from '../../support/stack';

const log = createLogger('error');
const open = (name: string): Promise<Nats> => connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name }, log);

/** Short, so that what the dying process was sent comes back within the test's wait. */
const ACK_WAIT_MS = 5_000;

describe('pinned durable consumer on a real nats-server', () => {
  const id = randomUUID().slice(0, 8);
  const stream = `PINTEST_${id}`;
  const subject = `pintest.${id}.events`;
  const durable = 'pinned-test';
  let admin: Nats;
  let a: Nats;
  let b: Nats;
  const consumers: RunningConsumer[] = [];

  beforeAll(async () => {
    admin = await open('pinned-admin');
    await admin.jsm.streams.add({ name: stream, subjects: [subject] });
    await ensureDurable(admin.jsm, { stream, name: durable, filterSubjects: [subject], maxAckPending: 100, ackWaitMs: ACK_WAIT_MS, pinned: true });
    [a, b] = await Promise.all([open('pinned-a'), open('pinned-b')]);
  });
  afterAll(async () => {
    for (const c of consumers) await c.stop();
    await admin.jsm.streams.delete(stream).catch(() => undefined);
    await Promise.all([admin.close(), a.close().catch(() => undefined), b.close()]);
  });

  test('one process receives everything in order; after its connection dies the other takes over, nothing lost or taken twice', async () => {
    const got: Record<'a' | 'b', number[]> = { a: [], b: [] };
    const start = (name: 'a' | 'b', nats: Nats): void => {
      consumers.push(consumeBatches({
        js: nats.js, stream, durable, pull: 10, log, maxBatch: 10, maxWaitMs: 0, pinned: true,
        handle: async (msgs: JsMsg[]) => {
          for (const msg of msgs) {
            got[name].push(Number(msg.string()));
            msg.ack();
          }
        },
      }));
    };
    start('a', a);
    start('b', b);
    for (let i = 1; i <= 20; i++) await admin.js.publish(subject, String(i));
    await eventually(() => got.a.length + got.b.length === 20, { what: 'the first 20 messages received', timeoutMs: 10_000 });
    const pinned = got.a.length === 20 ? 'a' : 'b';
    const other = pinned === 'a' ? 'b' : 'a';
    expect(got[pinned]).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(got[other]).toEqual([]);

    // The pinned process dies: its connection goes without a goodbye.
    await (pinned === 'a' ? a : b).nc.close();
    for (let i = 21; i <= 40; i++) await admin.js.publish(subject, String(i));
    // The pin times out after 5 s without pulls (PIN_TTL_MS); then the other one is pinned. What the
    // dead one had been sent comes back after ACK_WAIT_MS.
    await eventually(() => got[other].length >= 20, { what: 'the other process to receive the next 20', timeoutMs: 30_000 });
    // Nothing more can come: every message of the stream is acknowledged, none is left to deliver.
    await eventually(async () => admin.jsm.consumers.info(stream, durable), {
      what: 'all 40 stream messages acknowledged',
      until: (info) => info.ack_floor.stream_seq === 40 && info.num_ack_pending === 0 && info.num_pending === 0,
      timeoutMs: 30_000,
    });
    expect([...got[other]].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 21));
    expect(got[pinned]).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});
