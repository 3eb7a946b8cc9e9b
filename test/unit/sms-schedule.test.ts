// Scheduled sends (DESIGN §4 Scheduling; spec 1 §2.2 scheduledAt): the bounds and formats of an
// item's scheduledAt (core/sms/validate.ts, the acceptance core), and the submit_sm
// schedule_delivery_time of SMPP 3.4 §7.1.1 in both formats (gateways/smpp/validity-period.ts).
import { PDU, type PduOptions } from 'smpp';
import type { Price } from '../../core/accounts/types';
import { AppError } from '../../core/errors';
import { SmsAcceptance, type Submitter } from '../../core/sms/acceptance';
import { toGsm7Bytes } from '../../core/sms/encoding';
import type { SmsMessage } from '../../core/sms/message';
import { checkScheduledAt, checkSmsItem } from '../../core/sms/validate';
import { readSubmitSm, STATUS } from '../../gateways/smpp/protocol';
import { interpretSubmit, statusForFields } from '../../gateways/smpp/submit';
import { parseScheduleDeliveryTime } from '../../gateways/smpp/validity-period';
import { WORKFLOW_IDS } from '../../core/bus/temporal';
import { cancelStates } from '../../pipelines/charge-settler';
import { lifecycleStarts } from '../../pipelines/lifecycle-bridge';
import type { WebhookSchedule } from '../../workflows/presets';
import { makeMessage } from '../../support/message-rows';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const DAY = 86_400_000;
const BOUNDS = 'it must be from now to 35 days ahead';

describe('DESIGN §4 Scheduling: scheduledAt of an SMS create item (spec 1 §2.2)', () => {
  test.each([
    ['Z', '2026-11-27T12:00:00Z', NOW + DAY],
    ['lower-case z and milliseconds', '2026-11-27t12:00:00.250z', NOW + DAY + 250],
    ['an offset ahead of UTC', '2026-11-27T13:00:00+01:00', NOW + DAY],
    ['an offset behind UTC, without a colon', '2026-11-27T06:30:00-0530', NOW + DAY],
    ['no seconds', '2026-11-27T12:00Z', NOW + DAY],
    ['exactly 35 days ahead', '2026-12-31T12:00:00Z', NOW + 35 * DAY],
    ['a fraction of nanoseconds', '2026-11-26T12:00:05.123456789Z', NOW + 5_123],
  ])('%s is accepted as that instant', (_name, value, atMs) => {
    expect(checkScheduledAt(value, NOW)).toEqual({ ok: true, atMs });
  });

  test.each([
    ['now', '2026-11-26T12:00:00Z'],
    ['a second ahead', '2026-11-26T12:00:01Z'],
    ['a second behind (clocks differ)', '2026-11-26T11:59:59Z'],
  ])('%s is sent at once (atMs null)', (_name, value) => {
    expect(checkScheduledAt(value, NOW)).toEqual({ ok: true, atMs: null });
  });

  test('a time without an offset is refused, saying why', () => {
    expect(checkScheduledAt('2026-11-27T12:00:00', NOW)).toEqual({ ok: false, message: expect.stringContaining('has no UTC offset') });
    expect(checkScheduledAt('2026-11-27T12:00:00', NOW)).toEqual({ ok: false, message: expect.stringContaining('ambiguous') });
  });

  test.each([
    ['a date only', '2026-11-27'],
    ['words', 'tomorrow'],
    ['epoch seconds', '1795000000'],
    ['a 13th month', '2026-13-01T00:00:00Z'],
    ['30 February', '2027-02-30T00:00:00Z'],
    ['hour 24', '2026-11-27T24:00:00Z'],
    ['an offset of 19 hours', '2026-11-27T12:00:00+19:00'],
    ['empty', ''],
  ])('%s is not an ISO 8601 date-time', (_name, value) => {
    expect(checkScheduledAt(value, NOW)).toMatchObject({ ok: false });
  });

  test('in the past (beyond the second of grace) names the bound', () => {
    expect(checkScheduledAt('2026-11-26T11:59:58Z', NOW)).toEqual({ ok: false, message: `is in the past (2026-11-26T11:59:58.000Z); ${BOUNDS}` });
  });

  test('beyond 35 days names the bound and the latest time', () => {
    expect(checkScheduledAt('2026-12-31T12:00:01Z', NOW)).toEqual({ ok: false, message: `is more than 35 days ahead; ${BOUNDS} (at most 2026-12-31T12:00:00.000Z)` });
  });

  test('beyond the life of a waiting message\'s state (MESSAGE_STATE_TTL_HOURS less an hour) is refused, naming the setting', () => {
    const week = 168 * 3_600_000;
    expect(checkScheduledAt('2026-12-03T11:00:00Z', NOW, week)).toEqual({ ok: true, atMs: NOW + week - 3_600_000 });
    const late = checkScheduledAt('2026-12-03T11:00:01Z', NOW, week);
    expect(late).toEqual({ ok: false, message: expect.stringContaining('MESSAGE_STATE_TTL_HOURS=168') });
    expect(late).toEqual({ ok: false, message: expect.stringContaining('at most 2026-12-03T11:00:00.000Z') });
    expect(checkScheduledAt('2026-12-31T12:00:00Z', NOW, (35 * 24 + 1) * 3_600_000)).toEqual({ ok: true, atMs: NOW + 35 * DAY });
  });

  test('a number is the wrong JSON type (400), as for every other field', () => {
    expect(checkSmsItem({ from: 'TestCo', to: '+4915112345678', text: 'Hi', scheduledAt: 1795000000 })).toMatchObject({ ok: false, shape: { field: 'scheduledAt' } });
  });
});

describe('the acceptance core with scheduledAt', () => {
  const submitter: Submitter = { orgId: 'org-1', projectId: 'project-1', tokenId: 't1', source: 'http', currency: 'EUR' };
  let balance: number;
  let queued: SmsMessage[];
  const acceptance = new SmsAcceptance({
    prices: { price: (_o: string, _k: string, country: string): Price | undefined => (country === 'DE' ? { country, currency: 'EUR', priceMicros: 75_000 } : undefined) },
    funds: {
      charge: async (_o: string, micros: number) => { balance -= micros; return true; },
      credit: async (_o: string, micros: number) => { balance += micros; },
      settle: () => undefined,
      isHeld: async () => false,
    },
    states: { putAll: async () => undefined, get: async () => null },
    clientIds: { claim: async () => null, takeOver: async () => false, release: async () => undefined },
    queue: { enqueue: async (ms: readonly SmsMessage[]) => { queued.push(...ms); } },
    optOuts: { isOptedOut: () => false },
    now: () => new Date(NOW),
  });
  const item = (scheduledAt?: unknown): Record<string, unknown> => ({ from: 'TestCo', to: '+4915112345678', text: 'Hello', ...(scheduledAt === undefined ? {} : { scheduledAt }) });
  beforeEach(() => { balance = 1_000_000; queued = []; });

  test('a scheduled item is accepted as `scheduled` with its time in UTC, charged at acceptance', async () => {
    const m = await acceptance.submitOne(submitter, item('2026-11-27T13:00:00+01:00'));
    expect(m).toMatchObject({ status: 'scheduled', scheduledAt: '2026-11-27T12:00:00.000Z', charged: true, priceUserMicros: 75_000 });
    expect(balance).toBe(1_000_000 - 75_000);
    expect(queued.map((q) => q.status)).toEqual(['scheduled']);
  });

  test('within a second of now: sent at once (queued, scheduledAt null)', async () => {
    expect(await acceptance.submitOne(submitter, item('2026-11-26T12:00:00.900Z'))).toMatchObject({ status: 'queued', scheduledAt: null });
  });

  test('no scheduledAt (or null): queued as before', async () => {
    expect(await acceptance.submitOne(submitter, item())).toMatchObject({ status: 'queued', scheduledAt: null });
    expect(await acceptance.submitOne(submitter, item(null))).toMatchObject({ status: 'queued', scheduledAt: null });
  });

  test('a single send in the past or beyond 35 days → 422 on scheduledAt; nothing charged or queued', async () => {
    for (const at of ['2026-11-26T11:00:00Z', '2027-01-01T12:00:00Z', '2026-11-27T12:00:00']) {
      const err = await acceptance.submitOne(submitter, item(at)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'VALIDATION_FAILED', fields: { scheduledAt: [expect.any(String)] } });
    }
    expect(balance).toBe(1_000_000);
    expect(queued).toHaveLength(0);
  });

  test('bulk: a per-item error for the out-of-bounds item, the others accepted', async () => {
    const result = await acceptance.submitBulk(submitter, [item('2026-11-27T12:00:00Z'), item('2027-02-01T00:00:00Z'), item()]);
    expect(result.entities.map((e) => e.status)).toEqual(['scheduled', 'queued']);
    expect(result.errors).toEqual([{ index: 1, clientId: null, fields: { scheduledAt: [expect.stringContaining('more than 35 days ahead')] } }]);
  });

  test('the legacy API keeps its fields: scheduledAt is not a known field there', async () => {
    await expect(acceptance.submitOne({ ...submitter, projectId: null, source: 'legacy' }, item('2026-11-27T12:00:00Z'))).rejects.toMatchObject({ code: 'VALIDATION_FAILED', fields: { scheduledAt: ['is not a known field'] } });
    expect(queued).toHaveLength(0);
  });

  test('quote validates it the same way and charges nothing', async () => {
    const quote = await acceptance.quote(submitter, [item('2026-11-27T12:00:00Z'), item('2026-11-20T00:00:00Z')]);
    expect(quote.items).toHaveLength(1);
    expect(quote.errors).toEqual([{ index: 1, clientId: null, fields: { scheduledAt: [expect.stringContaining('is in the past')] } }]);
    await expect(acceptance.quote(submitter, item('2026-11-27T12:00:00'))).rejects.toMatchObject({ code: 'VALIDATION_FAILED', fields: { scheduledAt: [expect.stringContaining('no UTC offset')] } });
    expect(balance).toBe(1_000_000);
  });
});

describe('SMPP 3.4 §7.1.1 schedule_delivery_time → scheduledAt', () => {
  test('empty: at once', () => {
    expect(parseScheduleDeliveryTime('', NOW)).toEqual({ kind: 'now' });
  });

  test.each([
    ['relative, 10 seconds', '000000000010000R', '2026-11-26T12:00:10.000Z'],
    ['relative, 1 day 2 hours', '000001020000000R', '2026-11-27T14:00:00.000Z'],
    ['relative, 1 month (a calendar month)', '000100000000000R', '2026-12-26T12:00:00.000Z'],
    ['absolute UTC', '261127120000000+', '2026-11-27T12:00:00.000Z'],
    ['absolute UTC+1 (04 quarter hours ahead), tenths', '261127130000504+', '2026-11-27T12:00:00.500Z'],
    ['absolute UTC-5:30 (22 quarter hours behind)', '261127063000022-', '2026-11-27T12:00:00.000Z'],
  ])('%s', (_name, field, iso) => {
    expect(parseScheduleDeliveryTime(field, NOW)).toEqual({ kind: 'at', iso });
  });

  test.each(['tomorrow', '261327120000000+', '26112712000000+', '261127120000049+'])('%s is refused', (field) => {
    expect(parseScheduleDeliveryTime(field, NOW)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('schedule_delivery_time') });
  });

  const submit = (options: PduOptions) => readSubmitSm(new PDU('submit_sm', { source_addr: 'Acme', destination_addr: '4915112345678', data_coding: 0, short_message: toGsm7Bytes('hello'), ...options }).toBuffer());

  test('a submit_sm carries it as the item\'s scheduledAt (was refused with 0x61); absent leaves it out', () => {
    expect(interpretSubmit(submit({ schedule_delivery_time: '000000000010000R' } as PduOptions), NOW)).toMatchObject({ kind: 'whole', fields: { scheduledAt: '2026-11-26T12:00:10.000Z' } });
    expect(interpretSubmit(submit({ schedule_delivery_time: '261127120000000+' } as PduOptions), NOW)).toMatchObject({ kind: 'whole', fields: { scheduledAt: '2026-11-27T12:00:00.000Z' } });
    const plain = interpretSubmit(submit({}), NOW);
    expect(plain.kind === 'whole' && 'scheduledAt' in plain.fields).toBe(false);
  });

  test('malformed → ESME_RINVSCHED (0x61); the core\'s 422 on scheduledAt (bounds) → ESME_RINVSCHED', () => {
    expect(interpretSubmit(submit({ schedule_delivery_time: 'garbage' } as PduOptions), NOW)).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVSCHED });
    expect(statusForFields({ scheduledAt: ['is in the past'] })).toBe(STATUS.ESME_RINVSCHED);
  });
});

describe('lifecycle bridge: a scheduled message gets a smsScheduled workflow of its own (lifecycleStarts)', () => {
  const webhook = { attempts: 3 } as unknown as WebhookSchedule;
  const id = (n: number): string => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;
  const at = '2026-11-27T12:00:00.000Z';
  const accepted = [1, 2, 3, 4].map((n) => makeMessage({ id: id(n), ...(n % 2 === 0 ? { status: 'scheduled', scheduledAt: at } : {}) }));

  test('scheduled messages leave the batches, which hold the others exactly as without them', () => {
    const starts = lifecycleStarts(accepted, { batchMax: 50, validityMs: 5_000, webhook });
    expect(starts.filter((s) => s.kind === 'scheduled').map((s) => s.workflowId)).toEqual([WORKFLOW_IDS.lifecycle(id(2)), WORKFLOW_IDS.lifecycle(id(4))]);
    const batches = starts.filter((s) => s.kind === 'batch');
    const alone = lifecycleStarts(accepted.filter((m) => m.status !== 'scheduled'), { batchMax: 50, validityMs: 5_000, webhook });
    expect(batches).toEqual(alone);
    const first = starts[0];
    expect(first?.kind === 'scheduled' && first.input).toMatchObject({ messageId: id(2), scheduledAt: at, validityMs: 5_000, webhooks: true, chargedMicros: accepted[1]?.priceUserMicros });
  });

  test('with batchMax 1 too; a run without scheduled messages starts what it did before', () => {
    const starts = lifecycleStarts(accepted, { batchMax: 1, validityMs: 5_000, webhook });
    expect(starts.map((s) => s.kind)).toEqual(['scheduled', 'scheduled', 'message', 'message']);
    expect(lifecycleStarts(accepted.slice(0, 1), { batchMax: 1, validityMs: 1, webhook }).map((s) => s.kind)).toEqual(['message']);
  });
});

describe('charge settler: a scheduled message whose request died before the stream is canceled with its refunded hold', () => {
  test('cancelStates cancels a `scheduled` state (no timer holds it) and frees its clientId, so a retry is a new message', async () => {
    const message = makeMessage({ id: '00000000-0000-7000-8000-000000000009', status: 'scheduled', scheduledAt: '2026-11-27T12:00:00.000Z', clientId: 'retry-me' });
    const stored = new Map([[message.id, { message, revision: 1 }]]);
    const released: string[] = [];
    const canceled = await cancelStates(
      { read: async (id) => stored.get(id) ?? null, replace: async (m, revision) => { stored.set(m.id, { message: m, revision: revision + 1 }); return revision + 1; } },
      { claim: async () => null, takeOver: async () => false, release: async (_scope, clientId) => { released.push(clientId); } },
      { micros: 75_000, at: 0, ids: [message.id] } as unknown as Parameters<typeof cancelStates>[2],
    );
    expect(canceled).toBe(1);
    expect(stored.get(message.id)?.message).toMatchObject({ status: 'canceled', charged: false });
    expect(released).toEqual(['retry-me']);
  });
});
