// Spec 3 §4.1 rule 7: date values, as DateTime64(6, 'UTC') parameter text.
import fc from 'fast-check';
import { parseDateValue } from '../../core/filters/grammar-a';

const now = new Date('2026-11-22T12:34:56.789Z');

describe('spec 3 §4.1 rule 7: ISO 8601 with offset', () => {
  test.each([
    ['2026-11-22T01:02:03+02:00', '2026-11-21 23:02:03.000000'],
    ['2026-11-22T01:02:03Z', '2026-11-22 01:02:03.000000'],
    ['2026-11-22T01:02:03.5Z', '2026-11-22 01:02:03.500000'],
    ['2026-11-22T01:02:03.123456-05:30', '2026-11-22 06:32:03.123456'],
    ['2026-11-22T01:02:03+0200', '2026-11-21 23:02:03.000000'],
    ['2026-11-22T01:02:03+02', '2026-11-21 23:02:03.000000'],
    ['2026-01-01T00:30:00+01:00', '2025-12-31 23:30:00.000000'],
    ['2028-02-29T12:00:00Z', '2028-02-29 12:00:00.000000'],
    // a `+` that URL decoding turned into a space
    ['2026-11-22T01:02:03 02:00', '2026-11-21 23:02:03.000000'],
  ])('%s → %s', (text, expected) => {
    expect(parseDateValue(text, now)).toBe(expected);
  });
});

describe('spec 3 §4.1 rule 7: microsecond UTC form without offset', () => {
  test.each([
    ['2026-11-22T01:02:03.123456', '2026-11-22 01:02:03.123456'],
    ['2026-11-22 01:02:03.123456', '2026-11-22 01:02:03.123456'],
    ['2026-11-22 01:02:03.000001', '2026-11-22 01:02:03.000001'],
    ['2026-11-22T01:02:03', '2026-11-22 01:02:03.000000'],
  ])('%s → %s', (text, expected) => {
    expect(parseDateValue(text, now)).toBe(expected);
  });
});

describe('spec 3 §4.1 rule 7: relative "<n> <period> ago" (now injected)', () => {
  test.each([
    ['0 seconds ago', '2026-11-22 12:34:56.789000'],
    ['1 second ago', '2026-11-22 12:34:55.789000'],
    ['90 minutes ago', '2026-11-22 11:04:56.789000'],
    ['1 minute ago', '2026-11-22 12:33:56.789000'],
    ['25 hours ago', '2026-11-21 11:34:56.789000'],
    ['1 day ago', '2026-11-21 12:34:56.789000'],
    ['30 days ago', '2026-10-23 12:34:56.789000'],
    ['1 month ago', '2026-10-22 12:34:56.789000'],
    ['11 months ago', '2025-12-22 12:34:56.789000'],
    ['1 year ago', '2025-11-22 12:34:56.789000'],
    ['2 Years Ago', '2024-11-22 12:34:56.789000'],
    ['  3  days   ago ', '2026-11-19 12:34:56.789000'],
  ])('%s → %s', (text, expected) => {
    expect(parseDateValue(text, now)).toBe(expected);
  });

  test('month arithmetic clamps to the end of the shorter month', () => {
    expect(parseDateValue('1 month ago', new Date('2026-03-31T10:00:00Z'))).toBe('2026-02-28 10:00:00.000000');
    expect(parseDateValue('1 year ago', new Date('2028-02-29T10:00:00Z'))).toBe('2027-02-28 10:00:00.000000');
  });
});

describe('spec 3 §4.1 rule 7: anything else is not a date', () => {
  test.each([
    '', 'now', 'yesterday', '2026-11-22', '2026-11-22T01:02', '22/11/2026 01:02:03', '1700000000',
    '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2027-02-29T00:00:00Z', '2026-11-22T24:00:00Z',
    '2026-11-22T01:60:00Z', '2026-11-22T01:02:60Z', '2026-11-22T01:02:03.1234567', '2026-11-22T01:02:03+24:00',
    '2026-11-22T01:02:03+02:60', '1 week ago', '1 days', 'ago', '-1 days ago', '1.5 days ago', 'in 2 days',
    '1899-12-31T23:59:59Z', '2300-01-01T00:00:00Z', '1900-01-01T00:30:00+01:00', '200 years ago',
    '2026-11-22T01:02:03Z; DROP TABLE x', ' 2026-11-22T01:02:03Z\n--',
  ])('%j', (text) => {
    expect(parseDateValue(text, now)).toBeUndefined();
  });
});

describe('spec 3 §4.1 rule 7: properties', () => {
  const instant = fc.date({ min: new Date('1901-01-01T00:00:00Z'), max: new Date('2298-12-31T00:00:00Z'), noInvalidDate: true });

  test('the Z form of any instant is that instant, to the millisecond', () => {
    fc.assert(
      fc.property(instant, (d) => {
        const iso = d.toISOString();
        expect(parseDateValue(iso, now)).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 23)}000`);
      }),
    );
  });

  test('the same instant written with any offset gives the same parameter', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -14 * 60, max: 14 * 60 }), (d, offset) => {
        const local = new Date(d.getTime() + offset * 60_000).toISOString().slice(0, 23);
        const sign = offset < 0 ? '-' : '+';
        const abs = Math.abs(offset);
        const written = `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
        expect(parseDateValue(written, now)).toBe(parseDateValue(d.toISOString(), now));
      }),
    );
  });
});
