// The lifecycle bridge's decisions (pipelines/lifecycle-bridge.ts, docs/lifecycle.md; spec 1 §6
// for inbound) over in-memory ports: which lifecycle workflows a run of accepted messages
// starts, which workflow each message's carrier events are signalled to, and where an inbound
// message goes. No engine; the Temporal side is test/integration/lifecycle.test.ts.
import type { Token } from '../../core/accounts/types';
import { WORKFLOW_IDS } from '../../core/bus';
import type { CarrierInbound } from '../../core/carrier/types';
import type { LifecycleOwner } from '../../core/sms/lifecycle-ports';
import type { NumberDirectory } from '../../core/sms/ports';
import { lifecycleStarts, routeEvents, routeInbound, workflowTaskTimeoutOf } from '../../pipelines/lifecycle-bridge';
import type { WebhookSchedule } from '../../workflows/presets';
import { makeMessage } from '../../support/message-rows';

const webhook = { attempts: 3 } as unknown as WebhookSchedule;
const id = (n: number): string => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const messages = [1, 2, 3, 4, 5].map((n) => makeMessage({ id: id(n), source: n === 2 ? 'legacy' : 'http' }));

describe('lifecycle bridge: starts (lifecycleStarts)', () => {
  test('batchMax 1: one smsLifecycle per message, id sms-<id>, no webhooks for a legacy message', () => {
    const starts = lifecycleStarts(messages, { batchMax: 1, validityMs: 5_000, webhook });
    expect(starts.map((s) => s.workflowId)).toEqual(messages.map((m) => WORKFLOW_IDS.lifecycle(m.id)));
    expect(starts.every((s) => s.kind === 'message')).toBe(true);
    const [first, second] = starts;
    expect(first?.kind === 'message' && first.input).toMatchObject({ messageId: id(1), validityMs: 5_000, webhooks: true, webhook });
    expect(second?.kind === 'message' && second.input.webhooks).toBe(false);
  });

  test('batchMax 2: batches of at most 2 in stream order, named by their first message and a fingerprint of all their ids', () => {
    const starts = lifecycleStarts(messages, { batchMax: 2, validityMs: 5_000, webhook });
    expect(starts.map((s) => (s.kind === 'batch' ? s.input.members.map((m) => m.id) : []))).toEqual([[id(1), id(2)], [id(3), id(4)], [id(5)]]);
    for (const s of starts) expect(s.workflowId.startsWith(`smsb-${s.kind === 'batch' ? s.input.members[0]?.id : ''}-`)).toBe(true);
    const [first] = starts;
    expect(first?.kind === 'batch' && first.input.members.map((m) => m.webhooks)).toEqual([true, false]);
    expect(first?.kind === 'batch' && first.memo).toMatchObject({ messageCount: 2 });
  });

  test('the same messages give the same batch id (a repeated start finds its workflow); another grouping gives another', () => {
    const again = lifecycleStarts(messages.slice(0, 2), { batchMax: 2, validityMs: 1, webhook });
    const first = lifecycleStarts(messages, { batchMax: 2, validityMs: 1, webhook })[0];
    expect(again[0]?.workflowId).toBe(first?.workflowId);
    const other = lifecycleStarts(messages.slice(0, 3), { batchMax: 3, validityMs: 1, webhook })[0];
    expect(other?.workflowId).not.toBe(first?.workflowId);
    expect(other?.workflowId.startsWith(`smsb-${id(1)}-`)).toBe(true);
  });

  test('nothing accepted, nothing started', () => {
    expect(lifecycleStarts([], { batchMax: 50, validityMs: 1, webhook })).toEqual([]);
  });
});

describe('lifecycle bridge: carrier events to workflows (routeEvents)', () => {
  const owners = (claims: Record<string, string>, failing: readonly string[] = []) => ({
    find: (messageId: string): Promise<LifecycleOwner | null> => (failing.includes(messageId)
      ? Promise.reject(new Error('kv unavailable'))
      : Promise.resolve(claims[messageId] ? ({ workflowId: claims[messageId] } as LifecycleOwner) : null)),
  });

  test('a claimed message\'s events go to its batch (with the other members\'), an unclaimed one\'s to sms-<id>, in stream order', async () => {
    const byMessage = new Map([['a', ['a1', 'a2']], ['b', ['b1']], ['c', ['c1', 'c2']]]);
    const { byWorkflow, unresolved } = await routeEvents(byMessage, owners({ a: 'smsb-a-f', b: 'smsb-a-f' }));
    expect(unresolved).toEqual([]);
    expect(byWorkflow.get('smsb-a-f')).toEqual({ batch: true, entries: expect.arrayContaining(['a1', 'a2', 'b1']) as unknown });
    expect(byWorkflow.get('smsb-a-f')?.entries.filter((e) => e.startsWith('a'))).toEqual(['a1', 'a2']);
    expect(byWorkflow.get(WORKFLOW_IDS.lifecycle('c'))).toEqual({ batch: false, entries: ['c1', 'c2'] });
  });

  test('a message whose owner cannot be looked up is left unresolved (delivered again), the others still routed', async () => {
    const { byWorkflow, unresolved } = await routeEvents(new Map([['a', ['a1']], ['b', ['b1']]]), owners({}, ['a']));
    expect(unresolved.map((u) => [u.messageId, u.entries])).toEqual([['a', ['a1']]]);
    expect([...byWorkflow.keys()]).toEqual([WORKFLOW_IDS.lifecycle('b')]);
  });
});

describe('lifecycle bridge: inbound messages (routeInbound, spec 1 §6)', () => {
  const token = { id: 'tok-1', orgId: 'org-1', projectId: 'proj-1', revokedAt: null } as unknown as Token;
  const directory = (t: Token | undefined): NumberDirectory => ({
    tokenByNumber: (n) => (n === '+4915100000001' ? t : undefined),
    org: (id) => (id === 'org-1' ? { currency: 'EUR' } : undefined),
  });
  const mo = (text: string, to = '+4915100000001'): CarrierInbound => ({ carrier: 'sim', from: '+4917600000002', to, text, at: '2026-11-26T10:00:00.000Z', inboundId: 'in-1' });

  test('a reply to a token\'s number: an inbound record (with its owner, for the history) and a DLR with from/to for the token, with one id, no opt-out', () => {
    const route = routeInbound(mo('hello'), directory(token), () => 'new-id');
    expect(route).toEqual({
      record: {
        id: 'new-id', tokenId: 'tok-1', from: '+4917600000002', to: '+4915100000001', text: 'hello', status: 'inbound', at: '2026-11-26T10:00:00.000Z',
        orgId: 'org-1', projectId: 'proj-1', currency: 'EUR',
      },
      delivery: {
        tokenId: 'tok-1', messageId: 'new-id', seq: 1,
        payload: { id: 'new-id', status: 'inbound', code: 0, eventAt: '2026-11-26T10:00:00.000Z', message: 'hello', from: '+4917600000002', to: '+4915100000001' },
      },
      keyword: null,
      optOutProject: undefined,
      optInProject: undefined,
      helpReply: undefined,
      token,
    });
  });

  test('STOP opts the sender out of the token\'s project and is reported as stop', () => {
    const route = routeInbound(mo('STOP'), directory(token), () => 'x');
    expect(route?.optOutProject).toBe('proj-1');
    expect(route?.record.status).toBe('stop');
    expect(route?.delivery.payload.status).toBe('stop');
  });

  test('DESIGN §4 Two-way: a START-family first word opts the sender back into the project, delivered as a plain inbound', () => {
    for (const text of ['START', ' yes please', 'Unstop\n']) {
      const route = routeInbound(mo(text), directory(token), () => 'x');
      expect(route).toMatchObject({ keyword: 'start', optInProject: 'proj-1', optOutProject: undefined });
      expect(route?.record.status).toBe('inbound');
      expect(route?.delivery.payload.status).toBe('inbound');
    }
  });

  test('DESIGN §4 Two-way: a STOP-family first word with more text is a stop; HELP is a plain inbound that changes no opt-out', () => {
    expect(routeInbound(mo('  quit now'), directory(token), () => 'x')).toMatchObject({ keyword: 'stop', optOutProject: 'proj-1', optInProject: undefined, record: { status: 'stop' } });
    expect(routeInbound(mo('help'), directory(token), () => 'x')).toMatchObject({ keyword: 'help', optOutProject: undefined, optInProject: undefined, record: { status: 'inbound' } });
  });

  test('DESIGN §4 Two-way: HELP/INFO to a token with a help text: the reply goes from the number that received it to the handset; none when unset', () => {
    const helpful = { ...token, helpText: 'Acme alerts. Reply STOP to stop.' } as Token;
    for (const text of ['HELP', ' info me']) {
      expect(routeInbound(mo(text), directory(helpful), () => 'x')?.helpReply).toEqual({ from: '+4915100000001', to: '+4917600000002', text: 'Acme alerts. Reply STOP to stop.' });
    }
    expect(routeInbound(mo('hello'), directory(helpful), () => 'x')?.helpReply).toBeUndefined();
    expect(routeInbound(mo('HELP'), directory(token), () => 'x')?.helpReply).toBeUndefined();
    expect(routeInbound(mo('HELP'), directory({ ...helpful, helpText: null }), () => 'x')?.helpReply).toBeUndefined();
    expect(routeInbound(mo('HELP'), directory({ ...helpful, projectId: null }), () => 'x')?.helpReply).toBeUndefined();
  });

  test('STOP to an account-wide token (no project) opts nobody out', () => {
    expect(routeInbound(mo('STOP'), directory({ ...token, projectId: null }), () => 'x')?.optOutProject).toBeUndefined();
  });

  test('a number no token owns, or a revoked token\'s, is dropped', () => {
    expect(routeInbound(mo('hi', '+4915199999999'), directory(token))).toBeNull();
    expect(routeInbound(mo('hi'), directory({ ...token, revokedAt: '2026-01-01T00:00:00.000Z' }))).toBeNull();
  });
});

describe('lifecycle bridge: workflow task timeouts (workflowTaskTimeoutOf)', () => {
  // docs/decisions.md 2026-11-27: a batch lifecycle's task that the server started and never
  // delivered waits for this timeout; the per-message ones keep 60 s (a timeout under starvation
  // lost a signal of a per-message workflow, 2026-11-26).
  test('a batch lifecycle asks for the server default of 10 s, a per-message or scheduled one for 60 s', () => {
    const starts = lifecycleStarts([...messages, makeMessage({ id: id(9), status: 'scheduled', scheduledAt: '2030-01-01T00:00:00.000Z' })], { batchMax: 2, validityMs: 5_000, webhook });
    const byKind = new Map(starts.map((s) => [s.kind, workflowTaskTimeoutOf(s.kind)]));
    expect(Object.fromEntries(byKind)).toEqual({ scheduled: '60 seconds', batch: '10 seconds' });
    expect(workflowTaskTimeoutOf('message')).toBe('60 seconds');
  });
});
