import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metadata, type MetadataJson } from 'libphonenumber-js/core';
import mobile from 'libphonenumber-js/metadata.mobile.json';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * The numbering rules of Ugandan mobile numbers, read from libphonenumber-js's mobile metadata
 * with its own Metadata API: calling code, possible national lengths, the national number pattern
 * and the mobile pattern. shared/domain/phone.ts applies them to E.164 numbers, so Lambda bundles
 * carry a few hundred bytes of rules instead of the library's parser (~37 KB). The unit test
 * test/unit/phone-metadata.test.ts fails when the committed file differs from what the installed
 * libphonenumber-js gives, and checks the domain rule against the library's own validation for
 * every number class; regenerate with `node --import tsx infra/tools/phone-metadata.ts`.
 */
/** The parts of libphonenumber-js's NumberingPlan used here (its typings omit them). */
interface NumberingPlanRules {
  callingCode(): string;
  possibleLengths(): number[];
  nationalNumberPattern(): string;
  type(name: 'MOBILE'): { pattern(): string } | undefined;
}

export function ugandaMobileRules() {
  const metadata = new Metadata(mobile as unknown as MetadataJson);
  metadata.selectNumberingPlan('UG');
  const plan = metadata.numberingPlan as unknown as NumberingPlanRules;
  const type = plan.type('MOBILE');
  if (!type) throw new Error('libphonenumber-js has no MOBILE type for UG');
  return {
    source: `libphonenumber-js metadata.mobile.json (version ${(mobile as unknown as { version: number }).version})`,
    calling_code: plan.callingCode(),
    possible_lengths: plan.possibleLengths(),
    national_number_pattern: plan.nationalNumberPattern(),
    mobile_pattern: type.pattern(),
  };
}

export const PHONE_RULES_FILE = join('shared', 'domain', 'phone-rules-ug.json');

if (process.argv[1]?.endsWith('phone-metadata.ts')) {
  writeFileSync(join(repoRoot(), PHONE_RULES_FILE), `${JSON.stringify(ugandaMobileRules(), null, 2)}\n`);
  process.stdout.write(`wrote ${PHONE_RULES_FILE}\n`);
}
