import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Ugandan mobile-money numbers (decisions §3): E.164 `+256…`, validated as a mobile number with
 * libphonenumber-js, and shown masked everywhere (`+256 7•• ••• 123`).
 */

/** The E.164 form of a valid Ugandan mobile number, or null. */
export function normaliseUgandanMobile(input: string): string | null {
  const p = parsePhoneNumberFromString(input, 'UG');
  if (!p || p.country !== 'UG' || !p.isValid()) return null;
  const type = p.getType();
  if (type !== 'MOBILE' && type !== 'FIXED_LINE_OR_MOBILE') return null;
  return p.number;
}

/** `+256712345123` → `+256 7•• ••• 123`. */
export function maskPhone(e164: string): string {
  const national = e164.replace(/^\+256/, '');
  if (national.length < 4) return '+256 •••';
  return `+256 ${national[0]}•• ••• ${national.slice(-3)}`;
}
