/** What a function may use, by name: the manifest (shared/manifest.ts) says what each Need provides, infra/stack/needs.ts what it grants. */

/** Outside systems and resources a function may use; each provides `NEEDS[need]` and its grants. */
export type Need =
  | 'table:read'
  | 'table:write'
  /** Read items of the single table in batches (BatchGetItem): the audit anchorer's heads and proofs. */
  | 'table:batch-read'
  /** Delete a payout that never reached the provider, with its guard (PAYMENT#PAY-…, PAYMENT#DISB-…, PAYOUT_GUARD# only; never a deposit PAYMENT#DEP-…). */
  | 'payout:discard'
  /** Delete a loan's batch guard (LOAN_GUARD# only) when the loan is repaid or cancelled. */
  | 'loan-guard:release'
  /** Append entries to a batch's hash-chained audit log (put AUDIT# items; without it every write there is denied). */
  | 'audit:append'
  | 'payout-state-machine:start'
  | 'payout-state-machine:callback'
  | 'payout-request-queue:send'
  | 'manual-review-topic:publish'
  /** Send an SMS to a phone number (SNS direct publish; locally the SMS stand-in topic SMS_TOPIC_ARN). */
  | 'sms:send'
  /** The cap on a cooperative's manual payouts per UTC day (MANUAL_PAYOUT_DAILY_LIMIT_USDC). */
  | 'manual-payout-limit'
  /** The merchant balance below which the ops are alerted (PAYOUT_BALANCE_ALARM_USD). */
  | 'payout-balance-alarm'
  | 'ledger'
  | 'payout-provider'
  | 'payout-webhook-secret'
  | 'chain-webhook-secret'
  | 'ledger-write-queue:send'
  /** Queue a receipt check of a sent batched ledger transaction. */
  | 'ledger-receipt-queue:send'
  /** Read the chain (no signing key): audit verification. */
  | 'ledger:read'
  /** Sign and send lending-vault writes (LendingVault, with the ledger signer). */
  | 'vault'
  /** Read the lending vault (no signing key): figures, positions, buyer payments. */
  | 'vault:read'
  /**
   * Keep evidence (docs/api/evidence.md#evidence-on-ipfs): write its CAR and files to the service's own evidence bucket
   * before the commit (write only), and queue its pin job for the background pinner.
   */
  | 'pin-store'
  /** Read evidence CARs (car/) of the service's own copy (the evidence bucket): audits, GET /ipfs/{cid}, the background pinner. */
  | 'evidence-archive:read'
  /** Hand out presigned GETs of evidence files (files/) of the own copy: GET /ipfs/{cid}/{name}. */
  | 'evidence-files:read'
  /**
   * Keep due diligence statements' documents (dds.json, dds.xml) in the evidence bucket under `dds/`
   * (docs/api/eudr.md#where-statements-are-kept): private, never under the paths GET /ipfs or the pinner read.
   */
  | 'dds-documents:write'
  /** Read statements' documents back from the evidence bucket's `dds/` prefix. */
  | 'dds-documents:read'
  /** Queue a pin job for the background pinner. */
  | 'evidence-pin-queue:send'
  /** Queue a large purchase order's per-batch work (confirmation, settlement) for the order worker. */
  | 'order-work-queue:send'
  /** The IPFS pinning service that imports evidence CARs (an S3-compatible pinning API, or Kubo / IPFS Cluster dag/import). */
  | 'evidence-pinning'
  | 'gfw'
  | 'maaif'
  | 'dds-filing-queue:send'
  | 'eudr-registry'
  /** Verify bearer tokens of the trusted issuer (the authorizer). */
  | 'token-issuer'
  /** The fiat on-ramp's API (MFI deposits: fiat in, USDC to the service treasury). */
  | 'onramp'
  | 'onramp-webhook-secret'
  /** The coffee price feed (USD per kg by grade) loans are valued with (docs/api/lending.md#price-feed). */
  | 'price-feed'
  /** Presign PUTs of evidence photo uploads into the uploads bucket (docs/api/evidence.md#evidence-photos-by-upload-url). */
  | 'evidence-uploads:presign'
  /** Read evidence photo uploads back from the uploads bucket (the stage update). */
  | 'evidence-uploads:read'
  /** Queue outbound webhook deliveries (docs/api/outbound-webhooks.md#outbound-webhooks). */
  | 'outbound-webhook-queue:send'
  /** POST signed webhooks to integrators' URLs (docs/api/outbound-webhooks.md#outbound-webhooks): https to public addresses only. */
  | 'outbound-webhooks'
  /** The scheduled chain watcher's tuning (confirmations, start block, range sizes). */
  | 'chain-watch'
  /** Seal outbound webhook signing secrets (envelope encryption: KMS GenerateDataKey only; locally the key file). */
  | 'outbound-secrets:seal'
  /** Open sealed outbound webhook signing secrets to sign deliveries (KMS Decrypt; locally the key file). */
  | 'outbound-secrets:open'
  /** Loan terms: days from a loan's creation to its due date. */
  | 'loan-terms';
