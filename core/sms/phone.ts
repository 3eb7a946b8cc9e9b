// Destination numbers: E.164 parsing and validation with libphonenumber-js (full metadata),
// giving the ISO country and the normalized +E.164 form (spec 1 §2.2 `country`, `normalizedTo`).
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export type PhoneCheck = { readonly ok: true; readonly country: string; readonly normalized: string } | { readonly ok: false; readonly message: string };

export function checkPhoneNumber(to: string): PhoneCheck {
  const digits = to.startsWith('+') ? to.slice(1) : to;
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  if (!parsed || !parsed.isValid()) return { ok: false, message: 'is not a valid phone number for any country' };
  if (!parsed.country) return { ok: false, message: 'is a non-geographic number; only numbers of a country can be reached' };
  return { ok: true, country: parsed.country, normalized: parsed.number };
}
