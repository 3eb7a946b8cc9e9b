// The phone verdict cache (core/sms/phone.ts) never changes a verdict: over numbers of every
// country libphonenumber knows — valid examples, their mutations, random digit strings, the
// non-geographic calling codes — the cached check answers exactly what libphonenumber itself
// answers, on first sight, on a repeat and after eviction.
import { getCountries, getCountryCallingCode, getExampleNumber, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/examples.mobile.json';
import { checkPhoneNumber, checkPhoneNumberUncached, PhoneVerdicts, type PhoneCheck } from '../../core/sms/phone';

/** The verdict as libphonenumber gives it, written out here independently of core/sms/phone.ts. */
function reference(to: string): PhoneCheck {
  const parsed = parsePhoneNumberFromString(`+${to.startsWith('+') ? to.slice(1) : to}`);
  if (!parsed || !parsed.isValid()) return { ok: false, message: 'is not a valid phone number for any country' };
  if (!parsed.country) return { ok: false, message: 'is a non-geographic number; only numbers of a country can be reached' };
  return { ok: true, country: parsed.country, normalized: parsed.number };
}

/** A deterministic generator (mulberry32), so a failure names a reproducible input. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function numbers(): string[] {
  const random = prng(15);
  const digit = (): string => String(Math.floor(random() * 10));
  const digits = (n: number): string => Array.from({ length: n }, digit).join('');
  const out = new Set<string>();
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country as CountryCode);
    const example = getExampleNumber(country as CountryCode, examples)?.number;
    if (example) {
      const body = example.slice(1);
      out.add(example);
      out.add(body); // without '+'
      out.add(`+${body.slice(0, -1)}`); // one digit short
      out.add(`+${body}${digit()}`); // one digit long
      for (let i = 0; i < 6; i++) {
        const at = code.length + Math.floor(random() * (body.length - code.length));
        out.add(`+${body.slice(0, at)}${digit()}${body.slice(at + 1)}`); // one digit changed
      }
    }
    for (let i = 0; i < 8; i++) out.add(`+${code}${digits(4 + Math.floor(random() * (12 - code.length)))}`);
  }
  for (const code of ['800', '808', '870', '878', '881', '882', '883', '888', '979']) {
    for (let i = 0; i < 6; i++) out.add(`+${code}${digits(6 + Math.floor(random() * 6))}`);
  }
  for (let i = 0; i < 3000; i++) out.add(`+${digits(1 + Math.floor(random() * 15))}`);
  return [...out];
}

describe('phone verdict cache: the same verdicts as libphonenumber', () => {
  const all = numbers();

  test('the table covers valid, invalid and non-geographic numbers of every country', () => {
    const verdicts = all.map(reference);
    const countries = new Set(verdicts.flatMap((v) => (v.ok ? [v.country] : [])));
    expect(all.length).toBeGreaterThan(6000);
    expect(countries.size).toBeGreaterThan(200);
    expect(verdicts.filter((v) => !v.ok && v.message.includes('any country')).length).toBeGreaterThan(1000);
    expect(verdicts.some((v) => !v.ok && v.message.includes('non-geographic'))).toBe(true);
  });

  test('first sight, repeat (shuffled) and after eviction: every verdict equals the reference', () => {
    // A small cache, so that most numbers are evicted and checked again.
    const cache = new PhoneVerdicts(97);
    const random = prng(10);
    const shuffled = [...all].sort(() => random() - 0.5);
    for (const to of [...all, ...shuffled]) {
      const expected = reference(to);
      expect({ to, verdict: cache.check(to) }).toEqual({ to, verdict: expected });
      expect({ to, verdict: checkPhoneNumberUncached(to) }).toEqual({ to, verdict: expected });
    }
    expect(cache.size).toBe(97);
  });

  test('the shared cache answers as libphonenumber, and "+49…" and "49…" share one verdict', () => {
    for (const to of all.slice(0, 1000)) expect({ to, verdict: checkPhoneNumber(to) }).toEqual({ to, verdict: reference(to) });
    const cache = new PhoneVerdicts(10);
    expect(cache.check('+4915112345678')).toEqual(reference('+4915112345678'));
    expect(cache.check('4915112345678')).toBe(cache.check('+4915112345678'));
    expect(cache.size).toBe(1);
  });
});
