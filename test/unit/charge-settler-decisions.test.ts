// The charge settler's decisions (pipelines/charge-settler.ts, docs/acceptance.md "Charges held
// until the stream has them"; spec 1 §2.6 for the canceled state's code) over in-memory ports:
// which holds a run of stream headers settles, which holds a sweep refunds, and which message
// states it cancels and clientIds it frees. No engine; the bus side is
// test/integration/charge-settler.test.ts.
import type { ChargeHold } from '../../core/accounts/types';
import { formatHoldRefs } from '../../core/bus/names';
import { clientIdScope } from '../../core/sms/acceptance';
import type { LifecycleStates, VersionedMessage } from '../../core/sms/lifecycle-ports';
import type { SmsMessage } from '../../core/sms/message';
import type { ClientIds } from '../../core/sms/ports';
import { createLogger } from '../../infra/logger';
import { CANCELED_CODE, refundStale, settleNamed, type HoldLedger, type SettlerPorts } from '../../pipelines/charge-settler';
import { makeMessage } from '../../support/message-rows';

/** A ledger over plain maps: org → open holds; what was settled and refunded. */
class FakeLedger implements HoldLedger {
  readonly settled: Array<[string, string[]]> = [];
  constructor(readonly open: Map<string, Map<string, ChargeHold>>) {}
  settleAll(orgId: string, holdIds: readonly string[]): Promise<void> {
    this.settled.push([orgId, [...holdIds]]);
    for (const id of holdIds) this.open.get(orgId)?.delete(id);
    return Promise.resolve();
  }
  openHold(orgId: string, holdId: string): Promise<ChargeHold | null> {
    return Promise.resolve(this.open.get(orgId)?.get(holdId) ?? null);
  }
  /** Set by a test: runs as a refund is applied (what the rest of the world sees at that moment). */
  onRefund: (() => void) | undefined;
  refundHold(orgId: string, holdId: string, heldBefore: number): Promise<ChargeHold | null> {
    this.onRefund?.();
    const hold = this.open.get(orgId)?.get(holdId);
    if (!hold || hold.at >= heldBefore) return Promise.resolve(null);
    this.open.get(orgId)?.delete(holdId);
    return Promise.resolve(hold);
  }
}

/** Message states with revisions; `conflicts` makes the next N replaces lose a race (a concurrent write came first). */
class FakeStates implements LifecycleStates {
  readonly byId = new Map<string, VersionedMessage>();
  conflicts = 0;
  put(message: SmsMessage): void {
    this.byId.set(message.id, { message, revision: (this.byId.get(message.id)?.revision ?? 0) + 1 });
  }
  read(id: string): Promise<VersionedMessage | null> {
    return Promise.resolve(this.byId.get(id) ?? null);
  }
  replace(message: SmsMessage, revision: number): Promise<number | null> {
    const current = this.byId.get(message.id);
    if (this.conflicts > 0) {
      this.conflicts -= 1;
      if (current) this.byId.set(message.id, { ...current, revision: current.revision + 1 });
      return Promise.resolve(null);
    }
    if (!current || current.revision !== revision) return Promise.resolve(null);
    this.byId.set(message.id, { message, revision: revision + 1 });
    return Promise.resolve(revision + 1);
  }
}

class FakeClientIds implements ClientIds {
  readonly released: Array<[string, string, string]> = [];
  claim(): Promise<string | null> { return Promise.resolve(null); }
  takeOver(): Promise<boolean> { return Promise.resolve(true); }
  release(scope: string, clientId: string, messageId: string): Promise<void> {
    this.released.push([scope, clientId, messageId]);
    return Promise.resolve();
  }
}

const encode = (holds: Record<string, ChargeHold>): Uint8Array => new TextEncoder().encode(JSON.stringify({ currency: 'EUR', availableMicros: 0, holds }));
const NOW = 1_000_000;
const WINDOW = 60_000;

function setup(holds: Record<string, Record<string, ChargeHold>>): { ports: SettlerPorts; ledger: FakeLedger; states: FakeStates; clientIds: FakeClientIds; balances: Array<[string, Uint8Array]> } {
  const ledger = new FakeLedger(new Map(Object.entries(holds).map(([org, h]) => [org, new Map(Object.entries(h))])));
  const states = new FakeStates();
  const clientIds = new FakeClientIds();
  return { ports: { ledger, states, clientIds, log: createLogger('silent') }, ledger, states, clientIds, balances: Object.entries(holds).map(([org, h]) => [org, encode(h)]) };
}

describe('charge settler: settling from stream headers (settleNamed)', () => {
  test('the holds named by a run of headers are settled with one ledger write per organization; messages without the header name none', async () => {
    const { ledger } = setup({});
    const named = await settleNamed(ledger, [
      formatHoldRefs([{ orgId: 'org-a', holdId: 'h1' }, { orgId: 'org-b', holdId: 'h2' }]),
      undefined,
      formatHoldRefs([{ orgId: 'org-a', holdId: 'h3' }]),
    ]);
    expect(named).toBe(3);
    expect(ledger.settled.sort()).toEqual([['org-a', ['h1', 'h3']], ['org-b', ['h2']]]);
  });

  test('a run naming no hold writes nothing', async () => {
    const { ledger } = setup({});
    expect(await settleNamed(ledger, [undefined, ''])).toBe(0);
    expect(ledger.settled).toEqual([]);
  });
});

describe('charge settler: the refund sweep (refundStale)', () => {
  test('a hold older than the window is refunded and its queued message canceled (code 99, not charged) with its clientId freed; a younger hold stays', async () => {
    const queued = makeMessage({ id: 'm-old', orgId: 'org-a', projectId: 'p1', status: 'queued', clientId: 'retry-me' });
    const { ports, ledger, states, clientIds, balances } = setup({
      'org-a': { old: { micros: 75_000, at: NOW - WINDOW - 1, ids: ['m-old'] }, young: { micros: 75_000, at: NOW - 10, ids: ['m-young'] } },
    });
    states.put(queued);
    states.put(makeMessage({ id: 'm-young', orgId: 'org-a', status: 'queued' }));

    expect(await refundStale(ports, balances, NOW - WINDOW)).toBe(1);

    expect([...(ledger.open.get('org-a')?.keys() ?? [])]).toEqual(['young']);
    const canceled = states.byId.get('m-old')?.message;
    expect(canceled).toMatchObject({ status: 'canceled', statusCode: CANCELED_CODE, charged: false });
    expect(states.byId.get('m-young')?.message.status).toBe('queued');
    expect(clientIds.released).toEqual([[clientIdScope('p1', 'org-a'), 'retry-me', 'm-old']]);
  });

  test('a message that moved on (sent) keeps its state and its clientId; the hold is still refunded', async () => {
    const { ports, states, clientIds, balances } = setup({ 'org-a': { h: { micros: 1, at: 0, ids: ['m1'] } } });
    states.put(makeMessage({ id: 'm1', orgId: 'org-a', status: 'sent', clientId: 'c1' }));
    expect(await refundStale(ports, balances, NOW - WINDOW)).toBe(1);
    expect(states.byId.get('m1')?.message.status).toBe('sent');
    expect(clientIds.released).toEqual([]);
  });

  test('a cancel that loses a race to a concurrent write reads again and cancels the still-queued state', async () => {
    const { ports, states, balances } = setup({ 'org-a': { h: { micros: 1, at: 0, ids: ['m1'] } } });
    states.put(makeMessage({ id: 'm1', orgId: 'org-a', status: 'queued', clientId: null }));
    states.conflicts = 2;
    await refundStale(ports, balances, NOW - WINDOW);
    expect(states.byId.get('m1')?.message.status).toBe('canceled');
  });

  test('a hold settled since the balance was read (the ledger refuses the refund) is neither counted nor canceled', async () => {
    const { ports, ledger, states, balances } = setup({ 'org-a': { h: { micros: 1, at: 0, ids: ['m1'] } } });
    states.put(makeMessage({ id: 'm1', orgId: 'org-a', status: 'queued' }));
    await ledger.settleAll('org-a', ['h']);
    expect(await refundStale(ports, balances, NOW - WINDOW)).toBe(0);
    expect(states.byId.get('m1')?.message.status).toBe('queued');
  });

  test('the messages are canceled before their hold is refunded: no moment shows a stale hold gone while its messages are still queued (a clientId retry would replay them)', async () => {
    const { ports, ledger, states, balances } = setup({ 'org-a': { h: { micros: 1, at: 0, ids: ['m1', 'm2'] } } });
    states.put(makeMessage({ id: 'm1', orgId: 'org-a', status: 'queued', clientId: 'c1' }));
    states.put(makeMessage({ id: 'm2', orgId: 'org-a', status: 'scheduled', clientId: 'c2' }));
    const atRefund: string[] = [];
    ledger.onRefund = () => { for (const id of ['m1', 'm2']) atRefund.push(states.byId.get(id)?.message.status ?? 'none'); };
    expect(await refundStale(ports, balances, NOW - WINDOW)).toBe(1);
    expect(atRefund).toEqual(['canceled', 'canceled']);
    expect(ledger.open.get('org-a')?.has('h')).toBe(false);
  });

  test('a hold the balance no longer has open (the snapshot was older) cancels nothing and refunds nothing', async () => {
    const { ports, ledger, states, clientIds, balances } = setup({ 'org-a': { h: { micros: 1, at: 0, ids: ['m1'] } } });
    states.put(makeMessage({ id: 'm1', orgId: 'org-a', status: 'queued', clientId: 'c1' }));
    ledger.open.get('org-a')?.delete('h');
    ledger.onRefund = () => { throw new Error('refunded a hold that is not open'); };
    expect(await refundStale(ports, balances, NOW - WINDOW)).toBe(0);
    expect(states.byId.get('m1')?.message.status).toBe('queued');
    expect(clientIds.released).toEqual([]);
  });

  test('with organization ids, only their balances are swept', async () => {
    const { ports, ledger, balances } = setup({ 'org-a': { h: { micros: 1, at: 0 } }, 'org-b': { h: { micros: 1, at: 0 } } });
    expect(await refundStale(ports, balances, NOW - WINDOW, ['org-b'])).toBe(1);
    expect(ledger.open.get('org-a')?.has('h')).toBe(true);
    expect(ledger.open.get('org-b')?.has('h')).toBe(false);
  });
});
