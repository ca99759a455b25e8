import { assertActsFor, assertMayMoveMoney } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { maskPhone } from '../domain/masking';
import { normaliseUgandanMobile } from '../domain/phone';
import type { Notifier } from '../domain/ports/messaging';
import type { FarmerPhoneStore, RegistryStore } from '../domain/ports/registry';
import type { Farmer, PhoneChange } from '../domain/records';
import { logger } from '../runtime/logger';

/** The ports of a phone change. */
export interface FarmerUpdateDeps {
  registry: Pick<RegistryStore, 'getFarmer' | 'getCooperative'>;
  phones: FarmerPhoneStore;
  /** The cooperative manager (topic) and the farmer's old number (SMS). */
  notifier: Notifier;
}

/**
 * PATCH /farmers/{id} `{phone}` (docs/api/payouts.md#manual-review: correcting the phone a payout failed on). The
 * payout phone decides where money goes, so it takes the same two keys as a manual payout.
 * Steps:
 *  1. ADMIN, or a COOPERATIVE token with the MANAGER duty (AGENT, other duties: 403
 *     INSUFFICIENT_PERMISSIONS with `details.required_duty`);
 *  2. `phone` is a Ugandan mobile in E.164 (the registration rule, shared/domain/phone.ts);
 *  3. the farmer exists (FARMER_NOT_REGISTERED, 404) and the token acts for its cooperative (403);
 *  4. the same number again changes nothing (no audit entry, no notice);
 *  5. one conditional update (the farmer still in that cooperative with the phone read in 3): the
 *     phone, phone_updated_at, updated_by and an entry in the farmer's `phone_changes` (who, role,
 *     when, both numbers masked); a concurrent change in between: 409 DUPLICATE_REQUEST, nothing written;
 *  6. notices: the cooperative manager (the managers' topic, `cooperative_id` attribute, both numbers
 *     masked) and the old number by SMS (new number masked). The change stands when a notice cannot
 *     be sent: that is logged as an error with `alarm: PHONE_CHANGE_NOT_NOTIFIED` for an operator.
 * Payouts already made keep the phone they were made to; a payout in manual review is sent to
 * the new phone only by a RETRY resolution (POST /payments/farmer-payout/{id}/resolve).
 * Errors: VALIDATION_ERROR (400), INSUFFICIENT_PERMISSIONS (403), FARMER_NOT_REGISTERED (404), DUPLICATE_REQUEST (409).
 */
export async function updateFarmerPhone(
  deps: FarmerUpdateDeps,
  caller: Caller,
  farmerId: string,
  input: { phone: string },
  now: Date,
): Promise<Farmer> {
  assertMayMoveMoney(caller);
  const phone = normaliseUgandanMobile(input.phone);
  if (!phone)
    throw new DomainError('VALIDATION_ERROR', 'phone is not a valid Ugandan mobile number.', {
      details: [{ path: 'phone', message: 'not a valid Ugandan mobile number (+2567…)' }],
    });
  const farmer = await deps.registry.getFarmer(farmerId);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${farmerId} is not in the farmer registry.`);
  assertActsFor(caller, farmer.cooperative_id);
  if (farmer.phone === phone) return farmer;
  const previous = farmer.phone ?? null;
  const at = now.toISOString();
  const change: PhoneChange = {
    at,
    actor: caller.sub,
    actor_role: caller.role,
    previous_phone: previous ? maskPhone(previous) : null,
    phone: maskPhone(phone),
  };
  const updated = await deps.phones.updateFarmerPhone({
    farmer_id: farmerId,
    cooperative_id: farmer.cooperative_id,
    phone,
    previous_phone: previous,
    actor: caller.sub,
    at,
    change,
  });
  if (!updated) {
    const fresh = await deps.registry.getFarmer(farmerId);
    if (!fresh || fresh.cooperative_id !== farmer.cooperative_id)
      throw new DomainError(
        'FARMER_NOT_REGISTERED',
        `Farmer ${farmerId} is not in the farmer registry of cooperative ${farmer.cooperative_id}.`,
      );
    throw new DomainError(
      'DUPLICATE_REQUEST',
      `The phone of farmer ${farmerId} was changed by another request meanwhile; nothing was changed: read the farmer and try again.`,
    );
  }
  await notifyPhoneChange(deps, updated, previous, phone, change);
  return updated;
}

/** Step 6 of `updateFarmerPhone`: both notices, each tried once; a failure is logged, never thrown. */
async function notifyPhoneChange(
  deps: Pick<FarmerUpdateDeps, 'registry' | 'notifier'>,
  farmer: Farmer,
  previous: string | null,
  phone: string,
  change: PhoneChange,
): Promise<void> {
  const coop = await deps.registry.getCooperative(farmer.cooperative_id).catch(() => null);
  const coopName = coop?.name ?? farmer.cooperative_id;
  const attributes = { cooperative_id: farmer.cooperative_id, event: 'farmer.phone_changed', farmer_id: farmer.farmer_id };
  const sends: Array<Promise<unknown>> = [
    deps.notifier.publish({
      subject: `Farmer ${farmer.farmer_id}: payout phone changed`,
      message: [
        `Cooperative ${coopName}: the mobile-money number of farmer ${farmer.full_name} (${farmer.farmer_id}) was changed from ${previous ? maskPhone(previous) : 'none'} to ${maskPhone(phone)}.`,
        `Changed by ${change.actor} (${change.actor_role}) at ${change.at}. Payouts from now on go to the new number.`,
        'If you did not expect this change, check it with the farmer before any payout is made.',
      ].join('\n'),
      attributes,
    }),
  ];
  if (previous) {
    sends.push(
      deps.notifier.sendSms({
        phone: previous,
        message: `${coopName}: the mobile-money number for your coffee payments (farmer ${farmer.farmer_id}) was changed to ${maskPhone(phone)} on ${change.at.slice(0, 10)}. If you did not ask for this, contact your cooperative office.`,
        attributes,
      }),
    );
  }
  const results = await Promise.allSettled(sends);
  results.forEach((r, i) => {
    if (r.status === 'rejected') {
      logger.error('phone change notice not sent', {
        farmer_id: farmer.farmer_id,
        notice: i === 0 ? 'manager' : 'old_number',
        alarm: 'PHONE_CHANGE_NOT_NOTIFIED',
        error: r.reason as Error,
      });
    }
  });
}
