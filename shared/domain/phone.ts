import rules from './phone-rules-ug.json';

/**
 * Ugandan mobile-money numbers (docs/security.md#personal-data): E.164 `+256` and a national number that
 * libphonenumber's numbering rules for Uganda call a mobile number (possible length, national
 * number pattern and mobile pattern, generated from libphonenumber-js's metadata by
 * infra/tools/phone-metadata.ts and checked against the library's own validation in
 * test/unit/phone-metadata.test.ts). A landline or a foreign number is not valid here. Requests
 * carry phones in E.164 (shared/http/schemas); masking lives in ./masking.
 */

const NATIONAL = new RegExp(`^(?:${rules.national_number_pattern})$`);
const MOBILE = new RegExp(`^(?:${rules.mobile_pattern})$`);
const E164 = new RegExp(`^\\+${rules.calling_code}(\\d+)$`);

/** `input` when it is the E.164 form (`+256` and 9 digits) of a valid Ugandan mobile number, else null. */
export function normaliseUgandanMobile(input: string): string | null {
  const national = E164.exec(input)?.[1];
  if (!national || !rules.possible_lengths.includes(national.length)) return null;
  return NATIONAL.test(national) && MOBILE.test(national) ? input : null;
}

export { maskPhone } from './masking';
