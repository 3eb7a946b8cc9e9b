import { defaultErr, formatReceipt, formatReceiptDate, MESSAGE_STATE, normalizeReceiptState, parseReceipt, parseReceiptDate, stateOfMessageState } from '../../core/carrier/receipt';
import { RECEIPT_STATES } from '../../core/carrier/types';

const submitted = new Date('2026-11-22T01:02:33.456Z');
const done = new Date('2026-11-22T01:07:59.000Z');

describe('DESIGN §4 carrier receipts: receipt text format', () => {
  test('the standard receipt text, with a 20-character excerpt', () => {
    const text = formatReceipt({ id: 'a1b2c3', submitted, done, state: 'DELIVRD', err: 0, text: 'Hello there, this is longer than twenty' });
    expect(text).toBe('id:a1b2c3 sub:001 dlvrd:001 submit date:2611220102 done date:2611220107 stat:DELIVRD err:000 text:Hello there, this is');
  });

  test('dlvrd is 000 for a state other than DELIVRD, err is zero-padded', () => {
    expect(formatReceipt({ id: 'x', submitted, done, state: 'UNDELIV', err: 8, text: '' })).toContain('dlvrd:000 submit date:');
    expect(formatReceipt({ id: 'x', submitted, done, state: 'UNKNOWN', err: 99, text: '' })).toContain('stat:UNKNOWN err:099 text:');
  });

  test('dates are YYMMDDhhmm in UTC and read back (with or without seconds)', () => {
    expect(formatReceiptDate(submitted)).toBe('2611220102');
    expect(parseReceiptDate('2611220102')?.toISOString()).toBe('2026-11-22T01:02:00.000Z');
    expect(parseReceiptDate('261122010233')?.toISOString()).toBe('2026-11-22T01:02:33.000Z');
    expect(parseReceiptDate('2613220102')).toBeUndefined();
    expect(parseReceiptDate('26112201')).toBeUndefined();
  });
});

describe('DESIGN §4 carrier receipts: parsing', () => {
  test('round trip for every state', () => {
    for (const state of RECEIPT_STATES) {
      const text = formatReceipt({ id: `id-${state}`, submitted, done, state, err: 6, text: 'Your code is 1234' });
      expect(parseReceipt(text)).toEqual({
        id: `id-${state}`, state, err: 6, sub: 1, dlvrd: state === 'DELIVRD' ? 1 : 0,
        submitted: new Date('2026-11-22T01:02:00.000Z'), done: new Date('2026-11-22T01:07:00.000Z'), text: 'Your code is 1234',
      });
    }
  });

  test('tolerates any field order, any case and missing fields', () => {
    const parsed = parseReceipt('STAT:delivrd ERR:000 ID:77aa Text:hi');
    expect(parsed).toMatchObject({ id: '77aa', state: 'DELIVRD', err: 0, text: 'hi', submitted: undefined, done: undefined, sub: undefined });
    expect(parseReceipt('err:002 stat:UNDELIV id:9')).toMatchObject({ id: '9', state: 'UNDELIV', err: 2 });
    expect(parseReceipt('id:5 stat:EXPIRED')).toMatchObject({ id: '5', state: 'EXPIRED', err: undefined });
  });

  test('variant key spellings and long state names', () => {
    const parsed = parseReceipt('id:1 sub:1 dlvrd:1 submit_date:2611220102 donedate:2611220103 stat:DELIVERED err:0');
    expect(parsed).toMatchObject({ id: '1', state: 'DELIVRD', err: 0 });
    expect(parsed.submitted?.toISOString()).toBe('2026-11-22T01:02:00.000Z');
    expect(parsed.done?.toISOString()).toBe('2026-11-22T01:03:00.000Z');
    expect(normalizeReceiptState('undeliverable')).toBe('UNDELIV');
    expect(normalizeReceiptState('rejected')).toBe('REJECTD');
    expect(normalizeReceiptState('nonsense')).toBeUndefined();
  });

  test('keys inside the message excerpt stay part of the excerpt', () => {
    const text = formatReceipt({ id: 'real', submitted, done, state: 'DELIVRD', err: 0, text: 'id:fake stat:REJECTD' });
    expect(parseReceipt(text)).toMatchObject({ id: 'real', state: 'DELIVRD', err: 0, text: 'id:fake stat:REJECTD' });
  });

  test('no state, no id, non-decimal err: reported as undefined', () => {
    expect(parseReceipt('hello world')).toMatchObject({ id: undefined, state: undefined, err: undefined });
    expect(parseReceipt('id: stat:WHATEVER err:0x1')).toMatchObject({ id: undefined, state: undefined, err: undefined });
  });
});

describe('DESIGN §4 carrier receipts: message_state TLV and missing err', () => {
  test('message_state values map both ways', () => {
    for (const state of RECEIPT_STATES) expect(stateOfMessageState(MESSAGE_STATE[state])).toBe(state);
    expect(MESSAGE_STATE.DELIVRD).toBe(2);
    expect(stateOfMessageState(0)).toBeUndefined();
    expect(stateOfMessageState(9)).toBeUndefined();
  });

  test('a receipt without err gets a code that fits its state', () => {
    expect(defaultErr('DELIVRD')).toBe(0);
    expect(defaultErr('ENROUTE')).toBe(0);
    expect(defaultErr('EXPIRED')).toBe(1);
    expect(defaultErr('REJECTD')).toBe(100);
    expect(defaultErr('UNDELIV')).toBe(99);
  });
});
