/**
 * Token roles, duties and the caller context handed to every handler (docs/security.md#tokens-and-roles).
 */

import { DUTIES, ROLES, type Caller, type Duty, type Role } from '../domain/caller';

export { DUTIES, ROLES, type Caller, type Role };

/** API Gateway authorizer context: string values only. */
export interface AuthorizerContext {
  sub: string;
  role: string;
  cooperative_id: string;
  mfi_id: string;
  duties: string;
  [key: string]: string;
}

/** Flattens a Caller into API Gateway's string-only authorizer context. */
export function callerToContext(c: Caller): AuthorizerContext {
  return { sub: c.sub, role: c.role, cooperative_id: c.cooperative_id ?? '', mfi_id: c.mfi_id ?? '', duties: c.duties.join(',') };
}

/** Reads the Caller back from an authorizer context (API Gateway or the local gateway). */
export function callerFromContext(ctx: Record<string, unknown> | null | undefined): Caller | null {
  if (!ctx || typeof ctx.role !== 'string' || !(ROLES as readonly string[]).includes(ctx.role)) return null;
  const str = (k: string) => (typeof ctx[k] === 'string' && ctx[k] !== '' ? (ctx[k] as string) : undefined);
  const duties = (str('duties') ?? '').split(',').filter((d): d is Duty => (DUTIES as readonly string[]).includes(d));
  return {
    sub: str('sub') ?? str('principalId') ?? 'unknown',
    role: ctx.role as Role,
    cooperative_id: str('cooperative_id'),
    mfi_id: str('mfi_id'),
    duties,
  };
}
