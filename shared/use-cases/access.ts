import type { Caller, Duty, Role } from '../auth/claims';
import { DomainError } from '../domain/errors';

/**
 * Cooperative binding (interface-spec Authentication 6; decisions §2): a COOPERATIVE or AGENT
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
    throw new DomainError('INSUFFICIENT_PERMISSIONS', `This operation needs one of the roles ${roles.join(', ')}; the token has role ${caller.role}.`);
  }
}

/** Duty check for COOPERATIVE tokens (ADMIN passes). Errors: INSUFFICIENT_PERMISSIONS (403). */
export function assertDuty(caller: Caller, duties: Duty[]): void {
  if (caller.role === 'ADMIN') return;
  if (caller.role === 'COOPERATIVE' && duties.some((d) => caller.duties.includes(d))) return;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `This operation needs a COOPERATIVE token with the duty ${duties.join(' or ')}.`);
}
