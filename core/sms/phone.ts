// Destination numbers: E.164 parsing and validation with libphonenumber-js (full metadata),
// giving the ISO country and the normalized +E.164 form (spec 1 §2.2 `country`, `normalizedTo`).
// libphonenumber is the largest single CPU item of bulk and SMPP acceptance (docs/acceptance.md),
// and its verdict is a pure function of the digits, so verdicts are remembered per digit string
// in a bounded cache; the cache never changes a verdict (test/unit/sms-phone-cache.test.ts).
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export type PhoneCheck = { readonly ok: true; readonly country: string; readonly normalized: string } | { readonly ok: false; readonly message: string };

const INVALID: PhoneCheck = Object.freeze({ ok: false, message: 'is not a valid phone number for any country' });
const NON_GEOGRAPHIC: PhoneCheck = Object.freeze({ ok: false, message: 'is a non-geographic number; only numbers of a country can be reached' });

/** The verdict of libphonenumber itself, without the cache. */
export function checkPhoneNumberUncached(to: string): PhoneCheck {
  const digits = to.startsWith('+') ? to.slice(1) : to;
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  if (!parsed || !parsed.isValid()) return INVALID;
  if (!parsed.country) return NON_GEOGRAPHIC;
  return Object.freeze({ ok: true, country: parsed.country, normalized: parsed.number });
}

/**
 * Verdicts of the most recently first-seen digit strings (insertion order: the oldest goes first
 * when full). 50,000 entries of ~150 bytes: under 10 MB.
 */
export class PhoneVerdicts {
  private readonly verdicts = new Map<string, PhoneCheck>();

  constructor(private readonly limit = 50_000) {}

  check(to: string): PhoneCheck {
    // The verdict depends on the digits only: "+49…" and "49…" are one entry.
    const key = to.charCodeAt(0) === 43 ? to.slice(1) : to;
    let verdict = this.verdicts.get(key);
    if (verdict === undefined) {
      verdict = checkPhoneNumberUncached(key);
      if (this.verdicts.size >= this.limit) {
        const oldest = this.verdicts.keys().next();
        if (!oldest.done) this.verdicts.delete(oldest.value);
      }
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }

  get size(): number {
    return this.verdicts.size;
  }
}

const shared = new PhoneVerdicts();

export function checkPhoneNumber(to: string): PhoneCheck {
  return shared.check(to);
}
