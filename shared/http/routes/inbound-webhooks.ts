import { defineRoute } from './define';
import { OnRampWebhookSchema } from '../deposit-schemas';
import { PawaPayCallbackSchema, PayoutWebhookSchema } from '../payout-schemas';
import { AnyChainEventSchema } from '../schemas';
import { ok } from './success';
import { webhookAck } from '../openapi-example-records';
import * as V from '../view-schemas';

/**
 * The inbound webhooks routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /api/webhooks/onramp */
export const onrampWebhookRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/api/webhooks/onramp',
  fn: 'onramp-webhook',
  auth: 'webhook',
  event: OnRampWebhookSchema,
  needs: ['table:write', 'onramp', 'onramp-webhook-secret', 'ledger-write-queue:send'],
  summary: 'Signed fiat on-ramp webhooks (order completed, reversed, failed), each confirmed with the on-ramp.',
  notes:
    'Standard Webhooks (as the payout webhook) from the fiat on-ramp. Body `{type: "onramp.order.completed"|"onramp.order.reversed"|"onramp.order.failed", data: {ramp_payment_id, reference (DEP-…), source_currency, source_amount, usdc_amount (decimal), transfer_tx_hash, completed_at, reversed_at, failure_reason}}`. Each event is confirmed with the on-ramp (GET of the order) before it is applied: the order must carry the deposit\'s reference, currency, amount and ramp id, the treasury as destination, the event\'s status and the same values; otherwise 200 outcome `MISMATCH`, nothing changes and an alarm is logged. Completed: the USDC is recorded and the vault deposit requested (the single ledger writer; COMPLETED when mined). Reversed: the vault reversal of the deposit\'s shares is requested once the deposit is COMPLETED (REFUNDED when mined). Failed: a deposit without delivered USDC becomes FAILED. 200 `{received: true, outcome: APPLIED|DUPLICATE_WEBHOOK|IGNORED|UNKNOWN_REFERENCE|MISMATCH}`; replays and repeated events change nothing. 503 PROVIDER_UNAVAILABLE when the on-ramp cannot be asked: nothing recorded, resend.',
  responses: { '200': V.WebhookAckViewSchema },
  success: [ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED, UNKNOWN_REFERENCE or MISMATCH).')],
});

/** /api/webhooks/payout-provider */
export const payoutProviderWebhookRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/api/webhooks/payout-provider',
  fn: 'payout-provider-webhook',
  auth: 'webhook',
  event: PayoutWebhookSchema,
  needs: ['table:write', 'audit:append', 'payout-provider', 'payout-state-machine:callback', 'payout-webhook-secret'],
  summary: 'Signed settlement webhooks from the payout provider.',
  notes:
    "Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` (v1, HMAC-SHA256 under the whsec_ secret), 5 minutes tolerance. Body `{type: \"order.settled\"|\"order.failed\", data: {order_id, reference, amount_ugx, exchange_rate, mobile_money_transaction_id, settled_at, failure_reason}}`. Each event is confirmed with the provider before it is applied: the order with the event's `reference` must exist at the provider with the event's status and `order_id`, the payout's USD amount, and the same values as the event; the provider's values are stored, never the event's. Acknowledged (200 `{received, outcome}`) only after the event is durably recorded; replays of a `webhook-id` and events that no longer apply are acknowledged and change nothing; an event the provider does not confirm is acknowledged with outcome `MISMATCH`, changes nothing (the payout is settled from the provider's own answer later) and raises an alarm. 503 PROVIDER_UNAVAILABLE when the provider cannot be asked: nothing recorded, resend with the same `webhook-id`.",
  responses: { '200': V.WebhookAckViewSchema },
  success: [ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED, UNKNOWN_REFERENCE or MISMATCH).')],
});

/** /api/webhooks/pawapay */
export const pawaPayCallbackRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/api/webhooks/pawapay',
  fn: 'pawapay-callback',
  auth: 'webhook',
  event: PawaPayCallbackSchema,
  needs: ['table:write', 'audit:append', 'payout-provider', 'payout-state-machine:callback'],
  summary: "pawaPay's signed payout callbacks (when pawapay is in PAYOUT_PROVIDERS), each confirmed with pawaPay's status lookup.",
  notes:
    "Register this URL as the payouts callback URL in the pawaPay dashboard and enable signed callbacks. Signed as pawaPay signs them (RFC 9421 HTTP message signatures): `Content-Digest` (sha-512 or sha-256 of the raw body), `Signature-Input` covering at least `content-digest`, and `Signature`, verified with pawaPay's public key configured with the pawaPay secret (401 INVALID_SIGNATURE otherwise). Body: pawaPay's payout `{payoutId, status, amount, currency, recipient, created, providerTransactionId, failureReason, metadata}`; only `payoutId` and `status` are read. The payout is then read from pawaPay (`GET /v2/payouts/{payoutId}`), and pawaPay's answer, never the callback's, is applied as the payout webhook applies a settlement or failure: COMPLETED completes the payout, FAILED fails the attempt (its failure code normalised), a payout still processing is acknowledged as IGNORED. 200 `{received: true, outcome}`; a repeated callback changes nothing. 503 PROVIDER_UNAVAILABLE when pawaPay cannot be asked: nothing recorded; pawaPay resends.",
  responses: { '200': V.WebhookAckViewSchema },
  success: [ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED, UNKNOWN_REFERENCE or MISMATCH).')],
});

/** /api/webhooks/chain-events */
export const chainEventsWebhookRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/api/webhooks/chain-events',
  fn: 'chain-events-webhook',
  auth: 'webhook',
  event: AnyChainEventSchema,
  needs: [
    'table:write',
    'table:batch-read',
    'audit:append',
    'payout:discard',
    'payout-provider',
    'payout-state-machine:start',
    'chain-webhook-secret',
    'ledger:read',
    'vault:read',
    'pin-store',
    'ledger-write-queue:send',
    'order-work-queue:send',
    'chain-watch',
  ],
  summary:
    "Signed chain events, each applied only at the watcher's confirmation depth (CHAIN_WATCH_CONFIRMATIONS; 409 CHAIN_EVENT_NOT_CONFIRMED with Retry-After before) and checked against the ledger: batch.stage_changed (EXPORTED starts the TOP_UP payout) and purchase_order.paid (the buyer payment settles the order: loans repaid, batches SETTLED, remainder to the cooperative).",
  notes:
    'For operators who use a chain-event provider: the service\'s own scheduled chain-event watcher reads the same logs from the chain and applies them through the same use case, under the same ids, so an event both report is applied once. An event is applied only once its transaction is as deep as the watcher reads (CHAIN_WATCH_CONFIRMATIONS blocks on top of its block, the block read from the ledger, not from `block_number`): before that the answer is 409 CHAIN_EVENT_NOT_CONFIRMED with `Retry-After` (seconds) and `details` `[{tx_hash, block_number, head_block, confirmations, missing}]`, nothing is read from or written to the service\'s table, and the sender must send the same event (same `webhook-id`) again later. Standard Webhooks (as the payout webhook): `webhook-id` (1–200 characters; use `evt_<tx_hash>_<log_index>`, the watcher\'s id), `webhook-timestamp` (Unix seconds, 5 minutes of tolerance), `webhook-signature` `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>" keyed with the base64-decoded part of the whsec_ secret after the prefix>`. Body `{type: "batch.stage_changed", data: {batch_id, token_id, stage, tx_hash, block_number, log_index}}` — one TraceLog `StageRecorded(tokenId, stage, …)` log: `token_id` the uint256 as a decimal string, `batch_id` `BatchToken.batchIdOf(tokenId)`, `stage` the name of the stage code (0 DELIVERED … 5 EXPORTED, 6 SETTLED) — or `{type: "purchase_order.paid", data: {purchase_order_id, payer, amount_usd_micro (decimal string), tx_hash, block_number, log_index}}` — one LendingVault `PurchaseOrderPaid(poRef, payer, amount)` log: `purchase_order_id` the bytes32 `poRef` as ASCII without its trailing zero bytes; `tx_hash`/`log_index` the log\'s transaction and block-level log index; a buyer payment must match a mined `PurchaseOrderPaid` log of the lending vault (order, payer, amount) or it is 200 MISMATCH; it is kept once and counts toward its confirmed purchase order (from its `buyer_address`, when the order names one), which settles exactly once, when the counted payments reach its amount due (see GET /purchase-orders/{id}/settlement): outcome SETTLEMENT_STARTED, AWAITING_PAYMENT (counted, not paid in full yet), or — the payment staying in escrow as an unapplied payment an ADMIN may refund — OTHER_PAYER, UNKNOWN_PURCHASE_ORDER, ALREADY_SETTLED. Every event is checked before it counts: the batch must have reached the stage with that `tx_hash` in its stage history (or not yet recorded), and the ledger must hold a mined `StageRecorded` log of the TraceLog contract in that transaction at `log_index`, for the batch\'s token and stage; otherwise the answer is 200 with `outcome: MISMATCH` and nothing changes (logged as an alarm). EXPORTED starts the automatic TOP_UP payout of round(weight_kg × export_premium_ugx_per_kg) UGX, exactly once per batch however often the event arrives (none when the premium is 0). A processed `webhook-id` is answered 200 and not applied again; 503 LEDGER_UNAVAILABLE when the ledger cannot be read and 503 PROVIDER_UNAVAILABLE when the payout cannot be started yet (retry with the same id).',
  responses: { '200': V.WebhookAckViewSchema },
  success: [ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED or MISMATCH).')],
});
