// The lookup store's publish on a nats-server of its own (no stream takes lookup.created there):
// a publish the bus took but did not acknowledge may have been stored, so it surfaces as
// OutcomeUnknownError (the charge stays held and the charge settler decides, docs/acceptance.md
// "Charges held until the stream has them"); a refusal the bus answered (no responders) does not.
// Once a stream takes lookup.created: one stream message per lookup (msgID lookup-<id>), the
// charge hold in its Sms-Charge-Holds header.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { BUCKETS, formatHoldRefs, HEADERS } from '../../core/bus';
import { OutcomeUnknownError } from '../../core/errors';
import { newId } from '../../core/ids';
import type { Lookup } from '../../core/lookup/lookup';
import { createLogger } from '../../infra/logger';
import { Supervisor } from '../../infra/supervisor';
import { JetStreamLookupQueue } from '../../infra/bus/lookup-queue';
import { PipelinedJetStream } from '../../infra/pipelined-jetstream';
import { NatsLookupStore } from '../../stores/lookup-history';
import { freePort, natsServerSpec } from '../../infra/local-engines';

let dir: string;
let supervisor: Supervisor;
let nc: NatsConnection;
let pipeline: PipelinedJetStream;
let store: NatsLookupStore;

const lookup = (): Lookup => {
  const at = new Date().toISOString();
  return {
    id: newId(), orgId: 'org-l', projectId: 'p', tokenId: 't', source: 'http', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678',
    charged: true, priceMicros: 5_000, currency: 'EUR', createdAt: at, deliveredAt: at, updatedAt: at,
    status: 'delivered', statusCode: 0, subscriberStatus: 'active', imsi: null, servingMsc: null, ported: false, roaming: false, network: 'Test',
  };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lookup-store-'));
  const port = await freePort();
  supervisor = new Supervisor(dir, createLogger('error'));
  await supervisor.start(natsServerSpec({ storeDir: join(dir, 'js'), port }));
  nc = await connect({ servers: `127.0.0.1:${port}` });
  const kv = await new Kvm(nc).create(BUCKETS.messages, { history: 1 });
  pipeline = new PipelinedJetStream(nc, 500);
  store = new NatsLookupStore(kv, new JetStreamLookupQueue(pipeline));
}, 60_000);

afterAll(async () => {
  pipeline.close();
  await nc.close();
  await supervisor.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('lookup store: an unacknowledged publish', () => {
  test('taken by the bus but never acknowledged: OutcomeUnknownError, naming lookup.created', async () => {
    const silent = nc.subscribe('lookup.created');
    try {
      const failed = await store.put(lookup()).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(OutcomeUnknownError);
      expect((failed as Error).message).toMatch(/^lookup\.created: /);
    } finally {
      silent.unsubscribe();
    }
  });

  test('refused by the bus (no stream, no responders): the error as it is, not OutcomeUnknownError', async () => {
    const failed = await store.put(lookup()).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).not.toBeInstanceOf(OutcomeUnknownError);
  });
});

describe('lookup store: the publisher closed before the ack', () => {
  test('OutcomeUnknownError (the lookup may be stored), naming lookup.created', async () => {
    const own = new PipelinedJetStream(nc, 60_000);
    let taken!: () => void;
    const received = new Promise<void>((resolve) => { taken = resolve; });
    const silent = nc.subscribe('lookup.created', { callback: () => taken() });
    try {
      const pending = new NatsLookupStore(await new Kvm(nc).open(BUCKETS.messages), new JetStreamLookupQueue(own)).put(lookup()).catch((err: unknown) => err);
      // Taken by the bus (the silent subscriber has it), then the publisher closes unanswered.
      await received;
      own.close();
      const failed = await pending;
      expect(failed).toBeInstanceOf(OutcomeUnknownError);
      expect((failed as Error).message).toMatch(/^lookup\.created: /);
    } finally {
      silent.unsubscribe();
    }
  });
});

describe('lookup store: a stream takes lookup.created', () => {
  beforeAll(async () => {
    await (await jetstreamManager(nc)).streams.add({ name: 'LOOKUP_TEST', subjects: ['lookup.created'] });
  });

  test('one stream message per lookup (msgID lookup-<id>: a repeat is dropped), the hold in Sms-Charge-Holds, the body { lookups: [lookup] }', async () => {
    const jsm = await jetstreamManager(nc);
    const held = lookup();
    const hold = { orgId: held.orgId, holdId: held.id };
    await store.put(held, hold);
    await store.put(held, hold);
    const plain = lookup();
    await store.put(plain);
    const info = await jsm.streams.info('LOOKUP_TEST');
    expect(info.state.messages).toBe(2);
    const first = await jsm.streams.getMessage('LOOKUP_TEST', { seq: info.state.first_seq });
    expect(first?.subject).toBe('lookup.created');
    expect(first?.header.get('Nats-Msg-Id')).toBe(`lookup-${held.id}`);
    expect(first?.header.get(HEADERS.chargeHolds)).toBe(formatHoldRefs([hold]));
    expect(first?.json()).toEqual({ lookups: [held] });
    const second = await jsm.streams.getMessage('LOOKUP_TEST', { seq: info.state.last_seq });
    expect(second?.header.get('Nats-Msg-Id')).toBe(`lookup-${plain.id}`);
    expect(second?.header.has(HEADERS.chargeHolds)).toBe(false);
  });
});
