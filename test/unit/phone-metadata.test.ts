import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PHONE_METADATA_FILE, ugandaMobileMetadata } from '../../infra/tools/phone-metadata';
import { normaliseUgandanMobile } from '../../shared/domain/phone';
import { repoRoot } from '../../shared/runtime/paths';

describe('Uganda phone metadata', () => {
  it('is what the installed libphonenumber-js gives (regenerate with infra/tools/phone-metadata.ts)', () => {
    const committed = JSON.parse(readFileSync(join(repoRoot(), PHONE_METADATA_FILE), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(ugandaMobileMetadata())));
  });

  it('accepts Ugandan mobile numbers in any common notation and refuses landlines and foreign numbers', () => {
    expect(normaliseUgandanMobile('+256 772 123 456')).toBe('+256772123456');
    expect(normaliseUgandanMobile('0772123456')).toBe('+256772123456');
    expect(normaliseUgandanMobile('+256700000001')).toBe('+256700000001');
    expect(normaliseUgandanMobile('+256414123456')).toBeNull();
    expect(normaliseUgandanMobile('+254712345678')).toBeNull();
    expect(normaliseUgandanMobile('not a phone')).toBeNull();
  });
});
