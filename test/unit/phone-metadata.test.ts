import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePhoneNumberFromString, type MetadataJson } from 'libphonenumber-js/core';
import mobile from 'libphonenumber-js/metadata.mobile.json';
import { PHONE_RULES_FILE, ugandaMobileRules } from '../../infra/tools/phone-metadata';
import { normaliseUgandanMobile } from '../../shared/domain/phone';
import { repoRoot } from '../../shared/runtime/paths';

/** The oracle: libphonenumber-js itself, with its mobile metadata. */
function libphonenumberSays(e164: string): string | null {
  const p = parsePhoneNumberFromString(e164, mobile as unknown as MetadataJson);
  return p && p.country === 'UG' && p.isValid() && p.getType() === 'MOBILE' ? p.number : null;
}

describe('Uganda mobile rules', () => {
  it('are what the installed libphonenumber-js gives (regenerate with infra/tools/phone-metadata.ts)', () => {
    const committed = JSON.parse(readFileSync(join(repoRoot(), PHONE_RULES_FILE), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(ugandaMobileRules())));
  });

  it('agree with libphonenumber-js on every number the API admits (+256 and 9 digits): all 4-digit leads', () => {
    const disagreements: string[] = [];
    for (let lead = 0; lead < 10_000; lead++) {
      for (const tail of ['00000', '55555', '99999', '12345']) {
        const e164 = `+256${String(lead).padStart(4, '0')}${tail}`;
        if (normaliseUgandanMobile(e164) !== libphonenumberSays(e164)) disagreements.push(e164);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('refuses any other length, which the request schema refuses too (libphonenumber would read +256 0… as a national prefix)', () => {
    for (const e164 of ['+25677212345', '+2567721234567', '+2560772123456']) expect(normaliseUgandanMobile(e164)).toBeNull();
  });

  it('accepts Ugandan mobile numbers and refuses landlines, toll-free, foreign and malformed numbers', () => {
    expect(normaliseUgandanMobile('+256772123456')).toBe('+256772123456');
    expect(normaliseUgandanMobile('+256700000001')).toBe('+256700000001');
    expect(normaliseUgandanMobile('+256414123456')).toBeNull();
    expect(normaliseUgandanMobile('+256800123456')).toBeNull();
    expect(normaliseUgandanMobile('+254712345678')).toBeNull();
    expect(normaliseUgandanMobile('not a phone')).toBeNull();
  });
});
