// Per-message validity period (DESIGN §4 Scheduling: "validityPeriod per message overrides the
// default"): the HTTP item's bounds (core/sms/validate.ts) and the submit_sm validity_period of
// SMPP 3.4 §7.1.1 in both formats (gateways/smpp/validity-period.ts, submit.ts).
import { PDU, type PduOptions } from 'smpp';
import { toGsm7Bytes } from '../../core/sms/encoding';
import { toSmsEntity, type SmsMessage } from '../../core/sms/message';
import { checkSmsItem } from '../../core/sms/validate';
import { readSubmitSm, STATUS } from '../../gateways/smpp/protocol';
import { interpretSubmit, statusForFields } from '../../gateways/smpp/submit';
import { parseValidityPeriod } from '../../gateways/smpp/validity-period';

const item = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ from: 'TestCo', to: '+4915112345678', text: 'Hello', ...overrides });
const BOUNDS = 'must be a whole number of seconds from 60 (1 minute) to 259200 (72 hours)';

describe('DESIGN §4 Scheduling: validityPeriod of an SMS create item', () => {
  test.each([60, 61, 3_600, 172_800, 259_200])('%i seconds is accepted', (validityPeriod) => {
    expect(checkSmsItem(item({ validityPeriod }))).toEqual({ ok: true, value: item({ validityPeriod }) });
  });

  test.each([0, 59, -60, 259_201, 1e12, 60.5])('%p → 422 on validityPeriod naming the bounds', (validityPeriod) => {
    expect(checkSmsItem(item({ validityPeriod }))).toEqual({ ok: false, fields: { validityPeriod: [BOUNDS] } });
  });

  test('absent or null: the platform default (no field on the item)', () => {
    expect(checkSmsItem(item())).toEqual({ ok: true, value: item() });
    expect(checkSmsItem(item({ validityPeriod: null }))).toEqual({ ok: true, value: item() });
  });

  test('a string is the wrong JSON type (400), as for every other field', () => {
    expect(checkSmsItem(item({ validityPeriod: '60' }))).toMatchObject({ ok: false, shape: { field: 'validityPeriod' } });
  });

  test('the resource shows the message\'s own validityPeriod, null when the default applies', () => {
    const base = { id: 'x', clientId: null, status: 'queued', statusCode: null, pricePerSmsMicros: 0, priceUserMicros: 0 } as unknown as SmsMessage;
    expect(toSmsEntity({ ...base, validityPeriod: 60 }).validityPeriod).toBe(60);
    expect(toSmsEntity(base).validityPeriod).toBeNull();
  });
});

describe('SMPP 3.4 §7.1.1 validity_period → seconds from the submit', () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0);

  test('empty: the platform default', () => {
    expect(parseValidityPeriod('', now)).toEqual({ kind: 'default' });
  });

  test.each([
    ['000000000100000R', 60],
    ['000000010000000R', 3_600],
    ['000003000000000R', 259_200],
    ['000001120000000R', 129_600],
  ])('relative %s → %i s', (field, seconds) => {
    expect(parseValidityPeriod(field, now)).toEqual({ kind: 'seconds', seconds });
  });

  test.each([
    ['UTC (offset 00)', '261126130000000+', 3_600],
    ['tenths of a second rounded', '261126120100400+', 60],
    ['UTC+1 (04 quarter hours ahead): 14:00 local is 13:00 UTC', '261126140000004+', 3_600],
    ['UTC-5:30 (22 quarter hours behind): 07:30 local is 13:00 UTC', '261126073000022-', 3_600],
    ['UTC+12 (48): midnight of the 28th local is noon of the 27th UTC', '261128000000048+', 86_400],
    ['three days ahead (the longest)', '261129120000000+', 259_200],
  ])('absolute, %s', (_name, field, seconds) => {
    expect(parseValidityPeriod(field, now)).toEqual({ kind: 'seconds', seconds });
  });

  test.each([
    ['relative under a minute', '000000000059000R'],
    ['relative over 72 h', '000003000001000R'],
    ['relative with a month', '000100000000000R'],
    ['absolute in the past', '261126115900000+'],
    ['absolute 59 s ahead', '261126120059000+'],
    ['absolute past 72 h', '261129120001000+'],
    ['a 13th month', '261326120000000+'],
    ['30 February', '260230120000000+'],
    ['an offset of 49 quarter hours', '261126130000049+'],
    ['a hour 24', '261126240000000+'],
    ['a minute 60', '261126126000000+'],
    ['a day 00', '261100120000000+'],
    ['the wrong length', '26112613000000+'],
    ['an unknown sign', '261126130000000Z'],
    ['letters', 'tomorrow'],
  ])('%s is invalid', (_name, field) => {
    expect(parseValidityPeriod(field, now)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining(field) });
  });

  const submit = (options: PduOptions) => readSubmitSm(new PDU('submit_sm', { source_addr: 'Acme', destination_addr: '4915112345678', data_coding: 0, short_message: toGsm7Bytes('hello'), ...options }).toBuffer());

  test('a submit_sm carries it as the item\'s validityPeriod; absent leaves the field out', () => {
    expect(interpretSubmit(submit({ validity_period: '000000010000000R' } as PduOptions), now)).toMatchObject({ kind: 'whole', fields: { validityPeriod: 3_600 } });
    expect(interpretSubmit(submit({ validity_period: '261126130000000+' } as PduOptions), now)).toMatchObject({ kind: 'whole', fields: { validityPeriod: 3_600 } });
    const plain = interpretSubmit(submit({}), now);
    expect(plain.kind).toBe('whole');
    expect(plain.kind === 'whole' && 'validityPeriod' in plain.fields).toBe(false);
  });

  test('out of range or malformed → ESME_RINVEXPIRY (0x62)', () => {
    expect(STATUS.ESME_RINVEXPIRY).toBe(0x62);
    for (const field of ['000000000030000R', '000004000000000R', '261126110000000+', 'garbage']) {
      expect(interpretSubmit(submit({ validity_period: field } as PduOptions), now)).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVEXPIRY });
    }
    expect(statusForFields({ validityPeriod: ['x'] })).toBe(STATUS.ESME_RINVEXPIRY);
  });
});
