// The lookup store's publish on a nats-server of its own (no stream takes lookup.created there):
// a publish the bus took but did not acknowledge may have been stored, so it surfaces as
// OutcomeUnknownError (the charge stays held and the charge settler decides, docs/acceptance.md
// "Charges held until the stream has them"); a refusal the bus answered (no responders) does not.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { BUCKETS } from '../../core/bus';
import { OutcomeUnknownError } from '../../core/errors';
import { newId } from '../../core/ids';
import type { Lookup } from '../../core/lookup/lookup';
import { createLogger } from '../../infra/logger';
import { Supervisor } from '../../infra/supervisor';
import { NatsLookupStore } from '../../stores/lookup-history';
import { freePort, natsServerSpec } from '../../infra/local-engines';

let dir: string;
let supervisor: Supervisor;
let nc: NatsConnection;
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
  store = new NatsLookupStore(kv, jetstream(nc, { timeout: 500 }));
}, 60_000);

afterAll(async () => {
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
