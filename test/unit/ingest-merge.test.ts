// Merge rules of contacts (spec 2 §2.1 rules 1–2, §3; DESIGN §5 audience merge) and the
// ingest writer's plan (spec 2 §3 event rules, §4 rule 6 window), as pure functions.
import fc from 'fast-check';
import { applyPatch, deleteContact, mergeAudience, planWrites, versionOf, type ContactStates, type DsContactState, type IngestMessage } from '../../core/ingest';
import { automationWindowHolds } from '../../core/ingest/automation';
import type { AutomationTriggers } from '../../core/bus/ingest';

const at = '2026-11-23T10:00:00.000Z';
const str = (value: string) => ({ type: 'string' as const, value });
const num = (value: number) => ({ type: 'number' as const, value });
const values = (s: DsContactState | null | undefined): Record<string, unknown> => Object.fromEntries(Object.entries(s?.attributes ?? {}).filter(([, v]) => v.value !== null).map(([k, v]) => [k, v.value]));

describe('spec 2 §2.1: merge per datasource', () => {
  test('rule 1: an omitted attribute keeps its value; rule 2: explicit null clears it', () => {
    const a = applyPatch(undefined, 'ds', { userId: 'u', attributes: { _email: str('a@x.io'), plan: str('gold'), visits: num(1) } }, versionOf(1, 0), at);
    const b = applyPatch(a, 'ds', { userId: 'u', attributes: { plan: null, visits: num(2) } }, versionOf(2, 0), at);
    expect(values(b)).toEqual({ _email: 'a@x.io', visits: 2 });
    expect(b.attributes['plan']).toEqual({ value: null, type: null, version: versionOf(2, 0) });
  });

  test('applying a write again, or an older write later, changes nothing (replays are harmless)', () => {
    const a = applyPatch(undefined, 'ds', { userId: 'u', attributes: { plan: str('gold') } }, 5000, at);
    const b = applyPatch(a, 'ds', { userId: 'u', attributes: { plan: str('free') } }, 6000, at);
    expect(applyPatch(b, 'ds', { userId: 'u', attributes: { plan: str('free') } }, 6000, at)).toBe(b);
    expect(applyPatch(b, 'ds', { userId: 'u', attributes: { plan: str('gold') } }, 5000, at)).toBe(b);
  });

  test('a deletion is a tombstone: older writes do not revive the contact, newer ones start it afresh', () => {
    const live = applyPatch(undefined, 'ds', { userId: 'u', attributes: { plan: str('gold'), city: str('Rome') } }, 1000, at);
    const gone = deleteContact(live, 'ds', 2000, at);
    expect(gone.deleted).toBe(true);
    expect(applyPatch(gone, 'ds', { userId: 'u', attributes: { plan: str('x') } }, 1500, at)).toBe(gone);
    const again = applyPatch(gone, 'ds', { userId: 'u', attributes: { plan: str('new') } }, 3000, at);
    expect(again.deleted).toBe(false);
    expect(values(again)).toEqual({ plan: 'new' });
  });
});

describe('DESIGN §5: one audience record across datasources, latest write per attribute wins', () => {
  test('values and clears of the latest write win; deleted datasources do not count', () => {
    const one = applyPatch(undefined, 'ds-a', { userId: 'u', attributes: { _first_name: str('Old'), city: str('Berlin'), tier: num(1) } }, 1000, at);
    const two = applyPatch(undefined, 'ds-b', { userId: 'u', attributes: { _first_name: str('New'), tier: null } }, 2000, at);
    const merged = mergeAudience([one, two]);
    expect(merged?.datasourceIds).toEqual(['ds-a', 'ds-b']);
    expect(Object.fromEntries(Object.entries(merged?.attributes ?? {}).map(([k, v]) => [k, v.value]))).toEqual({ _first_name: 'New', city: 'Berlin' });
    expect(mergeAudience([deleteContact(one, 'ds-a', 3000, at), two])?.datasourceIds).toEqual(['ds-b']);
    expect(mergeAudience([deleteContact(one, 'ds-a', 3000, at)])).toBeNull();
  });

  test('property: one datasource\'s record merges as it does beside another datasource\'s deleted one (the one-record path)', () => {
    const write = fc.record({ name: fc.constantFrom('a', 'b', '_email', '_client_tags'), value: fc.option(fc.integer(), { nil: null }), deleted: fc.boolean() });
    fc.assert(fc.property(fc.array(write, { minLength: 1, maxLength: 12 }), (writes) => {
      let state: DsContactState | undefined;
      writes.forEach((w, i) => {
        const version = (i + 1) * 1000;
        state = w.deleted ? deleteContact(state, 'ds1', version, `2026-11-23T10:00:0${i % 10}.000Z`) : applyPatch(state, 'ds1', { userId: 'u', attributes: { [w.name]: w.value === null ? null : num(w.value) } }, version, `2026-11-23T10:00:0${i % 10}.000Z`);
      });
      const only = state as DsContactState;
      const gone = deleteContact(undefined, 'ds0', 1, at);
      expect(mergeAudience([only])).toEqual(mergeAudience([only, gone]));
      expect(JSON.stringify(mergeAudience([only]))).toBe(JSON.stringify(mergeAudience([gone, only])));
    }));
  });

  test('property: the merge does not depend on the order writes are applied in (versions order them)', () => {
    const write = fc.record({ name: fc.constantFrom('a', 'b', 'c'), value: fc.option(fc.integer(), { nil: null }), ds: fc.constantFrom('ds1', 'ds2') });
    fc.assert(fc.property(fc.array(write, { minLength: 1, maxLength: 20 }), fc.nat(), (writes, seed) => {
      const versioned = writes.map((w, i) => ({ ...w, version: (i + 1) * 1000 }));
      const run = (order: typeof versioned) => {
        const states = new Map<string, DsContactState>();
        for (const w of order) states.set(w.ds, applyPatch(states.get(w.ds), w.ds, { userId: 'u', attributes: { [w.name]: w.value === null ? null : num(w.value) } }, w.version, at));
        const merged = mergeAudience([...states.values()]);
        return Object.fromEntries(Object.entries(merged?.attributes ?? {}).map(([k, v]) => [k, v.value]));
      };
      const shuffled = [...versioned].sort((x, y) => ((x.version * 7919 + seed) % 97) - ((y.version * 7919 + seed) % 97));
      expect(run(shuffled)).toEqual(run(versioned));
    }));
  });
});

describe('spec 2 §4 rule 6: automation window', () => {
  test.each([
    [0, true], [59 * 60_000, true], [-59 * 60_000, true], [3_600_000, true], [-3_600_000, true],
    [3_600_001, false], [-3_600_001, false], [61 * 60_000, false], [-61 * 60_000, false], [86_400_000, false],
  ])('event date at reception %+d ms → triggers %s', (offset, expected) => {
    const now = Date.parse(at);
    expect(automationWindowHolds(now + offset, now)).toBe(expected);
  });
});

describe('spec 2 §3: the ingest writer plan', () => {
  const header = { orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt: at };
  const event = (userId: string, eventId: string, triggers = true) => ({ userId, eventId, eventType: 'view', eventDate: at, parameters: {}, triggers });

  test('event-only items without a contact are skipped; _user_data creates the contact first; duplicates are stored once', () => {
    const states: ContactStates = new Map();
    const messages: Array<{ seq: number; message: IngestMessage }> = [
      { seq: 1, message: { kind: 'events', ...header, failed: 0, items: [
        { event: event('ghost', 'g1'), userData: null },
        { event: event('new', 'n1'), userData: { userId: 'new', attributes: { _email: str('n@x.io') } } },
        { event: event('new', 'n1'), userData: null },
        { event: event('new', 'old'), userData: null },
      ] } },
    ];
    const plan = planWrites({ messages, states, storedBefore: (_ds, id) => id === 'old' });
    expect(plan.events.map((e) => e.eventId)).toEqual(['n1']);
    expect(plan.triggers.map((t) => [t.msgId, (JSON.parse(t.data.toString()) as AutomationTriggers).triggers.map((x) => x._event_id)])).toEqual([['ingest-1', ['n1']]]);
    expect(plan.usage).toEqual([expect.objectContaining({ endpoint: 'events', requests: 1, accepted: 1, duplicates: 2, skipped: 1 })]);
    expect([...plan.changedUsers.values()].map((u) => u.userId)).toEqual(['new']);
  });

  test('a deletion drops the contact and the events of the same run; later event-only items are skipped', () => {
    const states: ContactStates = new Map();
    const plan = planWrites({
      states, storedBefore: () => false,
      messages: [
        { seq: 1, message: { kind: 'contacts', ...header, failed: 0, contacts: [{ userId: 'u', attributes: { plan: str('gold') } }] } },
        { seq: 2, message: { kind: 'events', ...header, failed: 0, items: [{ event: event('u', 'e1'), userData: null }] } },
        { seq: 3, message: { kind: 'delete', ...header, userId: 'u' } },
        { seq: 4, message: { kind: 'events', ...header, failed: 0, items: [{ event: event('u', 'e2'), userData: null }] } },
      ],
    });
    // e1 leaves with its contact, id included (its id is recorded by its insert alone; docs: ingest-hardening decision on deleted contacts' event ids).
    expect(plan.events).toEqual([]);
    expect(plan.deletions).toEqual([{ projectId: 'p', datasourceId: 'd', userId: 'u' }]);
    expect(states.get('p\u0000u')?.get('d')?.deleted).toBe(true);
    expect(plan.usage.find((u) => u.endpoint === 'events')?.skipped).toBe(1);
  });

  test('events outside the window are stored without a trigger', () => {
    const states: ContactStates = new Map([['p\u0000u', new Map([['d', applyPatch(undefined, 'd', { userId: 'u', attributes: {} }, 1, at)]])]]);
    const plan = planWrites({ states, storedBefore: () => false, messages: [{ seq: 9, message: { kind: 'events', ...header, failed: 0, items: [{ event: event('u', 'late', false), userData: null }] } }] });
    expect(plan.events.map((e) => e.eventId)).toEqual(['late']);
    expect(plan.triggers).toEqual([]);
  });
});
