/**
 * Who is calling (docs/security.md#tokens-and-roles): token roles, cooperative duties and the verified caller that the
 * authorizer hands every handler. Transport (shared/auth) turns tokens into a Caller; the rules
 * below and in ./access.ts decide what a Caller may do.
 */

export const ROLES = ['COOPERATIVE', 'AGENT', 'MFI', 'ADMIN'] as const;
export type Role = (typeof ROLES)[number];

export const DUTIES = ['QUALITY_OFFICER', 'MILL_OPERATOR', 'WAREHOUSE_MANAGER', 'EXPORTER', 'MANAGER'] as const;
export type Duty = (typeof DUTIES)[number];

/** The verified caller: what the authorizer hands the handler. */
export interface Caller {
  sub: string;
  role: Role;
  cooperative_id?: string;
  mfi_id?: string;
  /** COOPERATIVE tokens: the duties held; a token without a `duties` claim holds all of them. */
  duties: Duty[];
}

/**
 * The caller of a public route (no token: /trace, /ipfs, /docs, /openapi.json, inbound webhooks).
 * A type of its own with no role and no duties, so it cannot be handed to a use case that expects
 * a `Caller`, and no role or duty check can accept it.
 */
export interface AnonymousCaller {
  sub: 'anonymous';
  role: null;
  duties: readonly [];
}

/** The one anonymous caller. */
export const ANONYMOUS_CALLER: AnonymousCaller = Object.freeze({ sub: 'anonymous', role: null, duties: [] as const }) as AnonymousCaller;

/** The system itself, as the caller of automatic payouts (batch payment, export premium). */
export const SYSTEM_CALLER: Caller = { sub: 'system', role: 'ADMIN', duties: [] };
