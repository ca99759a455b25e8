import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mobile from 'libphonenumber-js/metadata.mobile.json';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * libphonenumber-js "custom metadata": the mobile-number metadata of Uganda only, so that Lambda
 * bundles carry a few hundred bytes instead of every country's (~100 KB). The unit test
 * test/unit/phone-metadata.test.ts fails when the committed file differs from what the installed
 * libphonenumber-js gives; regenerate with `node --import tsx infra/tools/phone-metadata.ts`.
 */
export function ugandaMobileMetadata() {
  const m = mobile as unknown as { version: number; countries: Record<string, unknown> };
  return { version: m.version, country_calling_codes: { '256': ['UG'] }, countries: { UG: m.countries.UG }, nonGeographic: {} };
}

export const PHONE_METADATA_FILE = join('shared', 'domain', 'phone-metadata-ug.json');

if (process.argv[1]?.endsWith('phone-metadata.ts')) {
  writeFileSync(join(repoRoot(), PHONE_METADATA_FILE), `${JSON.stringify(ugandaMobileMetadata(), null, 2)}\n`);
  process.stdout.write(`wrote ${PHONE_METADATA_FILE}\n`);
}
