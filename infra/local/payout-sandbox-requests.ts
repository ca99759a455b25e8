import { timingSafeEqual } from 'node:crypto';
import Big from 'big.js';
import * as v from 'valibot';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Array<{ path: string; message: string }>,
  ) {
    super(message);
  }
}

export const MAX_BODY_BYTES = 1024 * 1024;
export const QUOTE_TTL_MS = 60_000;
export const WEBHOOK_ATTEMPTS = 3;
export const WEBHOOK_RETRY_MS = 200;
export const WEBHOOK_TIMEOUT_MS = 5000;
const USD_RE = /^\d{1,9}(\.\d{1,6})?$/;
const UGX_RE = /^[1-9]\d{0,12}$/;
export const RATE_RE = /^\d+(\.\d+)?$/;
const REFERENCE_RE = /^[A-Za-z0-9._:-]{1,128}$/;

type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validUgandanMobile(phone: unknown): boolean {
  if (typeof phone !== 'string' || !/^\+256\d{9}$/.test(phone)) return false;
  const parsed = parsePhoneNumberFromString(phone);
  if (!parsed?.isValid() || parsed.country !== 'UG' || parsed.number !== phone) return false;
  const type = parsed.getType();
  return type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE';
}

// ---------------------------------------------------------------- request bodies (valibot)

const USD_MESSAGE = 'must be a positive decimal string with at most 6 decimals';
const UGX_MESSAGE = 'must be a positive integer string';
const REFERENCE_MESSAGE = 'required: 1-128 characters of A-Z a-z 0-9 . _ : -';
const PHONE_MESSAGE = 'must be a Ugandan mobile number in E.164 (+256XXXXXXXXX)';
const NAME_MESSAGE = 'required: 1-140 characters';

const UsdAmount = v.pipe(
  v.string(USD_MESSAGE),
  v.check((a) => USD_RE.test(a) && new Big(a).gt(0), USD_MESSAGE),
);
const UgxAmount = v.pipe(v.string(UGX_MESSAGE), v.regex(UGX_RE, UGX_MESSAGE));
/** Exactly `value`; anything else is `must be "<value>"`. */
const literal = <T extends string>(value: T) => v.literal(value, `must be "${value}"`);

/**
 * A strict JSON object: every key not in `entries` is an issue "unknown field"; a missing entry is
 * "required", or `missing[key]` when that field has its own message.
 */
function strictJsonObject<E extends v.ObjectEntries>(entries: E, missing: { [K in keyof E]?: string } = {}) {
  return v.objectWithRest(entries, v.never('unknown field'), (issue) => {
    const key = issue.path?.[issue.path.length - 1]?.key;
    return typeof key === 'string' ? (missing[key as keyof E] ?? 'required') : 'must be an object';
  });
}

/** {@link strictJsonObject} for a nested field: anything but a plain object (e.g. an array) is "must be an object". */
function nestedJsonObject<E extends v.ObjectEntries>(entries: E, missing: { [K in keyof E]?: string } = {}) {
  return v.pipe(v.custom<Json>(isObject, 'must be an object'), strictJsonObject(entries, missing));
}

/** `POST /v1/quotes` body: USD→UGX, with the USD side, the UGX side or neither. */
export const QuoteRequestSchema = v.pipe(
  strictJsonObject({
    source_currency: literal('USD'),
    target_currency: literal('UGX'),
    source_amount: v.optional(UsdAmount),
    target_amount: v.optional(UgxAmount),
  }),
  v.forward(
    v.partialCheck(
      [['source_amount'], ['target_amount']],
      (q) => q.source_amount === undefined || q.target_amount === undefined,
      'give source_amount or target_amount, not both',
    ),
    ['target_amount'],
  ),
);

/** `POST /v1/orders` body: USD from the merchant balance to a Ugandan mobile-money wallet in UGX. */
export const OrderRequestSchema = strictJsonObject(
  {
    reference: v.pipe(v.string(REFERENCE_MESSAGE), v.regex(REFERENCE_RE, REFERENCE_MESSAGE)),
    quote_id: v.optional(v.pipe(v.string('must be a non-empty string'), v.minLength(1, 'must be a non-empty string'))),
    deposit: nestedJsonObject(
      { channel: literal('MERCHANT_BALANCE'), currency: literal('USD'), amount: UsdAmount },
      { amount: USD_MESSAGE },
    ),
    payout: nestedJsonObject({
      channel: literal('MOBILE_MONEY'),
      currency: literal('UGX'),
      network: v.optional(v.picklist(['MTN', 'AIRTEL'], 'must be "MTN" or "AIRTEL"')),
    }),
    recipient: nestedJsonObject(
      {
        phone: v.custom<string>(validUgandanMobile, PHONE_MESSAGE),
        name: v.pipe(
          v.string(NAME_MESSAGE),
          v.check((n) => n.trim() !== '' && n.length <= 140, NAME_MESSAGE),
        ),
      },
      { phone: PHONE_MESSAGE, name: NAME_MESSAGE },
    ),
  },
  { reference: REFERENCE_MESSAGE },
);

/** valibot issues → the provider's `details` entries `{path, message}` (dot paths, e.g. `deposit.amount`). */
export function toDetails(issues: readonly v.BaseIssue<unknown>[]): Array<{ path: string; message: string }> {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? '(body)', message: issue.message }));
}

/** The 400 VALIDATION_ERROR answer for `details`. */
export function invalidBody(details: Array<{ path: string; message: string }>): HttpError {
  return new HttpError(400, 'VALIDATION_ERROR', 'The request body is invalid.', details);
}

export function networkOf(phone: string): string | null {
  const prefix = phone.slice(4, 6);
  if (['76', '77', '78'].includes(prefix)) return 'MTN';
  if (['70', '74', '75'].includes(prefix)) return 'AIRTEL';
  return null;
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function floorUgx(usd: string, rate: string): number {
  return Number(new Big(usd).times(rate).round(0, 0).toFixed(0));
}
