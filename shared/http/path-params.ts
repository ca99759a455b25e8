import * as v from 'valibot';
import { BatchIdSchema } from './schema-parts';

/**
 * Path-parameter formats (docs/api/conventions.md#http-and-errors: parameters are checked, 400, before any existence check),
 * passed to `httpHandler({params: IdParams(…)})` by each route with a `{id}` and shown in the
 * OpenAPI document. Each accepts every id the service mints (shared/domain/ids.ts, the use cases)
 * and is bounded, so a well-formed id that does not exist is still a 404 of its resource, while an
 * overlong or foreign one never reaches DynamoDB. No trimming: the path is the id. Kept apart from
 * the body field formats so a bundle without path parameters does not carry them.
 */

/** Cooperative and farmer ids as their registration schemas accept them (`Id`, ≤ 64). */
export const PathId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/, 'must be an id of 1 to 64 letters, digits, and _ . : - (starting with a letter or digit)'),
);
/** `BATCH-<yyyy>-<nnnnnn>`. */
export const BatchIdParam = BatchIdSchema;
/** A payment: payouts `PAY-…`, deposits `DEP-…`, disbursements `DISB-…` (docs/api/conventions.md#identifiers-money-and-time), ≤ 64. */
export const PaymentIdParam = v.pipe(
  v.string(),
  v.regex(/^(PAY|DEP|DISB)-[A-Za-z0-9][A-Za-z0-9_.:-]{0,58}$/, 'must be a payment id PAY-…, DEP-… or DISB-… of at most 64 id characters'),
);
/** A farmer payout `PAY-<yyyy>-<nnnnnn>-<ss>`. */
export const PayoutIdParam = v.pipe(v.string(), v.regex(/^PAY-\d{4}-\d{6,12}-\d{2,6}$/, 'must be a payout id PAY-<yyyy>-<nnnnnn>-<ss>'));
/** A payout to a farmer: `PAY-<yyyy>-<nnnnnn>-<ss>`, or a loan disbursement `DISB-<yyyy>-<nnnnnn>`. */
export const FarmerPaymentIdParam = v.pipe(
  v.string(),
  v.regex(
    /^(PAY-\d{4}-\d{6,12}-\d{2,6}|DISB-\d{4}-\d{6,12})$/,
    'must be a payout id PAY-<yyyy>-<nnnnnn>-<ss> or a disbursement id DISB-<yyyy>-<nnnnnn>',
  ),
);
/** `JOB-<ULID>`. */
export const JobIdParam = v.pipe(v.string(), v.regex(/^JOB-[0-9A-HJKMNP-TV-Z]{26}$/i, 'must be a job id JOB-<ULID>'));
/** A due diligence statement `DDS-<yyyy>-<nnnnnn>` (named after its batch). */
export const DdsIdParam = v.pipe(v.string(), v.regex(/^DDS-\d{4}-\d{6,12}$/, 'must be a statement id DDS-<yyyy>-<nnnnnn>'));
/** A purchase order `PO-<ULID>` (any `PO-` id of at most 64 id characters). */
export const PurchaseOrderIdParam = v.pipe(
  v.string(),
  v.regex(/^PO-[A-Za-z0-9][A-Za-z0-9_.:-]{0,60}$/, 'must be a purchase order id PO-… of at most 64 id characters'),
);

/** The `{id}` path parameter of a route, in the given format. */
/* @__NO_SIDE_EFFECTS__ */
export function IdParams<S extends v.GenericSchema<string, string>>(id: S) {
  return v.object({ id });
}

/** An IPFS CID in a path: CIDv0 (`Qm…`, base58btc) or CIDv1 in base32 (`b…`), as GET /ipfs/{cid} takes it. */
export const CidParam = v.pipe(
  v.string(),
  v.regex(/^(Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{50,120})$/, 'must be a CID: CIDv0 Qm… or CIDv1 in base32 b…'),
);
