import { DomainError } from './errors';
import type { Farmer } from './records';

/**
 * A farmer's registration is usable only once the national farmer registry (MAAIF) confirmed it
 * (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). Errors: FARMER_NOT_REGISTERED (404) while it is PENDING or after it was REJECTED.
 */
export function assertFarmerUsable(f: Farmer): void {
  if (f.national_registry_status === 'PENDING') {
    throw new DomainError(
      'FARMER_NOT_REGISTERED',
      `Farmer ${f.farmer_id}'s registration is waiting for the national farmer registry (MAAIF); it completes when the registry answers.`,
    );
  }
  if (f.national_registry_status === 'REJECTED') {
    throw new DomainError(
      'FARMER_NOT_REGISTERED',
      `Farmer ${f.farmer_id} is not an active farmer in the national farmer registry (MAAIF).`,
    );
  }
}
