// Console operators in the stack's real NATS KV (stores/operator-store.ts): an e-mail taken by
// another operator is a conflict; any other failure of the store (here a closed connection,
// as when nats-server restarts during npm start's demo seed) is reported as what it is, not as
// "an operator with the email ... exists".
import { randomUUID } from 'node:crypto';
import { AccountConflictError } from '../../stores/account-store';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { OperatorStore } from '../../stores/operator-store';
import { stack } from '../../support/stack';

describe('console operators (OperatorStore)', () => {
  let nats: Nats;

  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'operator-store-test' }, createLogger('error'));
  });

  afterAll(async () => { if (!nats.nc.isClosed()) await nats.close(); });

  test('a second operator with the same e-mail is a conflict naming it', async () => {
    const store = await OperatorStore.open(nats.nc);
    const email = `ops-${randomUUID()}@example.com`;
    await store.create('org-operator-test', email);
    await expect(store.create('org-operator-test', email)).rejects.toThrow(new AccountConflictError(`an operator with the email ${email} exists`));
  });

  test('a store that cannot be reached is not reported as a taken e-mail', async () => {
    const store = await OperatorStore.open(nats.nc);
    await nats.close();
    const failure = await store.create('org-operator-test', `ops-${randomUUID()}@example.com`).then(() => null, (err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(AccountConflictError);
  });
});
