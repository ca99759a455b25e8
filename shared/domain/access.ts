import type { Caller, Duty, Role } from './caller';
import { DomainError } from './errors';

/**
 * Cooperative binding (docs/security.md#tokens-and-roles): a COOPERATIVE or AGENT
 * token acts for one cooperative, and naming another one — in a body or through the resource it
 * asks for — is 403 INSUFFICIENT_PERMISSIONS. ADMIN acts for all.
 */
export function assertActsFor(caller: Caller, cooperativeId: string): void {
  if (caller.role === 'ADMIN') return;
  if ((caller.role === 'COOPERATIVE' || caller.role === 'AGENT') && caller.cooperative_id === cooperativeId) return;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `This token does not act for cooperative ${cooperativeId}.`);
}

/** Role check for one operation. Errors: INSUFFICIENT_PERMISSIONS (403). */
export function assertRole(caller: Caller, roles: Role[]): void {
  if (!roles.includes(caller.role)) {
    throw new DomainError(
      'INSUFFICIENT_PERMISSIONS',
      `This operation needs one of the roles ${roles.join(', ')}; the token has role ${caller.role}.`,
    );
  }
}

/** Duty check for COOPERATIVE tokens (ADMIN passes). Errors: INSUFFICIENT_PERMISSIONS (403). */
export function assertDuty(caller: Caller, duties: Duty[]): void {
  if (caller.role === 'ADMIN') return;
  if (caller.role === 'COOPERATIVE' && duties.some((d) => caller.duties.includes(d))) return;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `This operation needs a COOPERATIVE token with the duty ${duties.join(' or ')}.`);
}

/**
 * Who may move money by hand (manual payouts, a farmer's payout phone): ADMIN, or a COOPERATIVE
 * token with the MANAGER duty. Errors: INSUFFICIENT_PERMISSIONS (403) with `details.required_duty`.
 */
export function assertMayMoveMoney(caller: Caller): void {
  try {
    assertDuty(caller, ['MANAGER']);
  } catch {
    throw new DomainError(
      'INSUFFICIENT_PERMISSIONS',
      `This operation moves money: it needs an ADMIN token or a COOPERATIVE token with the MANAGER duty; the token has role ${caller.role}${caller.role === 'COOPERATIVE' ? ` with the duties ${caller.duties.join(', ') || 'none'}` : ''}.`,
      {
        details: { required_role: 'COOPERATIVE', required_duty: 'MANAGER' },
      },
    );
  }
}

/**
 * Payment visibility (GET /payments/{id}, docs/security.md#tokens-and-roles): ADMIN sees every payment; a cooperative
 * sees its own cooperative's payments; an MFI only its own deposits (so never a farmer payout).
 */
export function canSeePayment(caller: Caller, payment: { cooperative_id?: string; mfi_id?: string }): boolean {
  if (caller.role === 'ADMIN') return true;
  if (caller.role === 'COOPERATIVE') return payment.cooperative_id !== undefined && caller.cooperative_id === payment.cooperative_id;
  if (caller.role === 'MFI') return payment.mfi_id !== undefined && caller.mfi_id === payment.mfi_id;
  return false;
}

/** Whether a cooperative may trade on `today`: licence ACTIVE and not past its expiry date. */
export function isCooperativeActive(c: { licence_status: string; licence_expires_at: string }, today = new Date()): boolean {
  return c.licence_status === 'ACTIVE' && c.licence_expires_at >= today.toISOString().slice(0, 10);
}
