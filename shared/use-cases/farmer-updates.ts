import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { normaliseUgandanMobile } from '../domain/phone';
import type { FarmerPhoneStore, RegistryStore } from '../domain/ports';
import type { Farmer } from '../domain/records';

/**
 * PATCH /farmers/{id} (decisions §2: the roles of registration — ADMIN; COOPERATIVE or AGENT of
 * the farmer's cooperative; decisions §11: correcting the phone a payout failed on). Steps:
 *  1. `phone` is a Ugandan mobile in E.164 (the registration rule, shared/domain/phone.ts);
 *  2. the farmer exists (FARMER_NOT_REGISTERED, 404) and the token acts for its cooperative
 *     (INSUFFICIENT_PERMISSIONS, 403);
 *  3. one conditional update (the farmer still in that cooperative): phone, phone_updated_at,
 *     updated_by (the token subject).
 * Payouts already made keep the phone they were made to; a payout in manual review is sent to
 * the new phone only by a RETRY resolution (POST /payments/farmer-payout/{id}/resolve).
 * Errors: VALIDATION_ERROR (400), INSUFFICIENT_PERMISSIONS (403), FARMER_NOT_REGISTERED (404).
 */
export async function updateFarmerPhone(
  deps: { registry: Pick<RegistryStore, 'getFarmer'>; phones: FarmerPhoneStore },
  caller: Caller,
  farmerId: string,
  input: { phone: string },
  now: Date,
): Promise<Farmer> {
  const phone = normaliseUgandanMobile(input.phone);
  if (!phone) throw new DomainError('VALIDATION_ERROR', 'phone is not a valid Ugandan mobile number.', { details: [{ path: 'phone', message: 'not a valid Ugandan mobile number (+2567…)' }] });
  const farmer = await deps.registry.getFarmer(farmerId);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${farmerId} is not in the farmer registry.`);
  assertActsFor(caller, farmer.cooperative_id);
  const updated = await deps.phones.updateFarmerPhone({ farmer_id: farmerId, cooperative_id: farmer.cooperative_id, phone, actor: caller.sub, at: now.toISOString() });
  if (!updated) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${farmerId} is not in the farmer registry of cooperative ${farmer.cooperative_id}.`);
  return updated;
}
