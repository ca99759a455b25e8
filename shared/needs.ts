/**
 * The Needs of the manifest (shared/manifest.ts): what each Need puts in a function's environment
 * (variables and secrets, in AWS and locally), the work queues, the environment every function
 * gets, and the variables set outside the Needs. In AWS a secret arrives as its ARN variable,
 * `<NAME>_SECRET_ARN` (`<NAME>_ARN` for the `..._SECRET` webhook secrets), which shared/config.ts
 * `secret(NAME, ARN_VARIABLE)` reads through the Parameters and Secrets extension; locally as
 * `<NAME>` holding the value itself. IAM grants per Need are in infra/stack/needs.ts.
 */

import type { Need } from './need';
/** The work queues; each has exactly one consumer among `workers`. */
export type QueueName =
  | 'payout-request-queue'
  | 'ledger-write-queue'
  | 'ledger-receipt-queue'
  | 'dds-filing-queue'
  | 'outbound-webhook-queue'
  | 'evidence-pin-queue'
  | 'order-work-queue';

/** A secret a Need carries. */
export interface SecretSpec {
  /** Local variable holding the value itself (shared/config.ts `secret(name)`). */
  readonly name: string;
  /**
   * AWS variable holding the Secrets Manager ARN: `<name>_SECRET_ARN`, except for names that end
   * in `_SECRET` (the webhook secrets), whose variable is `<name>_ARN`.
   */
  readonly arnVariable: string;
}

/** What one Need puts in a function's environment. */
export interface NeedSpec {
  readonly summary: string;
  /** Required variables, the same names in AWS and locally. */
  readonly env: readonly string[];
  /** Secrets: `arnVariable` (the ARN) set in AWS, `name` (the value) locally. */
  readonly secrets: readonly SecretSpec[];
  /** Variables the code reads with a default when unset; neither stack needs to set them. */
  readonly optionalEnv?: readonly string[];
  /** A route function with this need gets at least this timeout (default `ROUTE_TIMEOUT_SECONDS`). */
  readonly routeTimeoutSeconds?: number;
  /** A function with this need gets at least this much memory (default `DEFAULT_MEMORY_MIB`). */
  readonly memoryMiB?: number;
  /**
   * Only when the local stack stands in for the outside system differently: what it sets instead
   * of `env` and `secrets`, and why.
   */
  readonly local?: { readonly env: readonly string[]; readonly secrets: readonly SecretSpec[]; readonly note: string };
}

/** The ARN variable of a secret: `<name>_ARN` for `..._SECRET` names, else `<name>_SECRET_ARN`. */
type ArnVariableOf<N extends string> = N extends `${string}_SECRET` ? `${N}_ARN` : `${N}_SECRET_ARN`;

/** `{name, arnVariable}` (see {@link ArnVariableOf}), keeping both names as literal types. */
function secretOf<N extends string>(name: N): { readonly name: N; readonly arnVariable: ArnVariableOf<N> } {
  const arnVariable = name.endsWith('_SECRET') ? `${name}_ARN` : `${name}_SECRET_ARN`;
  return { name, arnVariable: arnVariable as ArnVariableOf<N> };
}

/** One work queue. */
export interface QueueSpec {
  /** Variable holding the queue URL (provided by the `<queue>:send` need). */
  readonly urlEnv: string;
  readonly fifo: boolean;
  /** Receives before a message moves to the queue's DLQ. */
  readonly maxReceiveCount: number;
  readonly summary: string;
}

/** The work queues (their consumers and batch sizes are in `workers`). */
export const QUEUES = {
  'payout-request-queue': {
    urlEnv: 'PAYOUT_REQUEST_QUEUE_URL',
    fifo: false,
    maxReceiveCount: 5,
    summary: 'Batches whose NET_COFFEE_PAYMENT payout is to be started.',
  },
  'ledger-write-queue': {
    urlEnv: 'LEDGER_WRITE_QUEUE_URL',
    fifo: true,
    maxReceiveCount: 50,
    summary:
      'FIFO, one message group: the writes (the single ledger writer signs them in order, so nonces never collide; it retries a write until it lands).',
  },
  'ledger-receipt-queue': {
    urlEnv: 'LEDGER_RECEIPT_QUEUE_URL',
    fifo: true,
    maxReceiveCount: 50,
    summary:
      'FIFO, one message group: the receipt checks of the batched transactions the single ledger writer sent (docs/ledger.md#the-pipelined-writer), consumed by the same function beside its writes, so settling a mined group never holds a write back.',
  },
  'dds-filing-queue': {
    urlEnv: 'DDS_FILING_QUEUE_URL',
    fifo: false,
    maxReceiveCount: 20,
    summary: 'DDS filings, retried until the registry gives the reference numbers.',
  },
  'evidence-pin-queue': {
    urlEnv: 'EVIDENCE_PIN_QUEUE_URL',
    fifo: false,
    maxReceiveCount: 8,
    summary:
      'Pin jobs of stage evidence packages (docs/api/evidence.md#evidence-on-ipfs; a due diligence statement is private and never pinned): the background pinner uploads each CAR to the pinning service; a failed attempt is retried on redelivery, then dead-lettered.',
  },
  'order-work-queue': {
    urlEnv: 'ORDER_WORK_QUEUE_URL',
    fifo: false,
    maxReceiveCount: 10,
    summary:
      'The per-batch work of purchase orders above one transaction (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): creation, confirmation and settlement steps, off the request path; a run that reaches its time budget queues the rest, a redelivered message continues from the recorded progress, and the purchase-order reconciler queues again the work of an order that stalled (a lost or dead-lettered message).',
  },
  'outbound-webhook-queue': {
    urlEnv: 'OUTBOUND_WEBHOOK_QUEUE_URL',
    fifo: false,
    maxReceiveCount: 10,
    summary:
      'Outbound webhook delivery attempts (docs/api/outbound-webhooks.md#outbound-webhooks); the retry schedule is kept by the consumer (re-queued with DelaySeconds, in hops of at most 900 s), so only a crashing consumer dead-letters a message.',
  },
} as const satisfies Record<QueueName, QueueSpec>;

/** Route functions that call only AWS services. */
export const ROUTE_TIMEOUT_SECONDS = 10;
/**
 * Route functions that call the ledger or the payout provider (up to 3 attempts of 5 s each):
 * just under API Gateway's 29 s integration limit, so the handler's own error answers.
 */
const ROUTE_OUTSIDE_CALL_TIMEOUT_SECONDS = 28;
/** Memory of every function unless a need asks for more. */
export const DEFAULT_MEMORY_MIB = 512;
/** Memory of functions that sign ledger transactions (viem). */
const LEDGER_MEMORY_MIB = 1024;

/**
 * Environment variables and secrets of each Need. Literals only (and pure-annotated calls), so
 * bundles that import one name from this module drop the rest; `manifestProblems` checks each
 * `<queue>:send` need against `QUEUES[queue].urlEnv`.
 */
export const NEEDS = {
  'table:read': { summary: 'Point reads and queries of the single table.', env: ['TABLE_NAME'], secrets: [] },
  'table:write': { summary: 'Reads, conditional puts and updates of the single table.', env: ['TABLE_NAME'], secrets: [] },
  'table:batch-read': { summary: 'Batch reads (BatchGetItem) of the single table.', env: ['TABLE_NAME'], secrets: [] },
  'payout:discard': {
    summary: 'Delete a never-sent payout (PAYMENT#PAY-…, PAYMENT#DISB-…) and its guard (PAYOUT_GUARD#) (a grant only).',
    env: [],
    secrets: [],
  },
  'loan-guard:release': {
    summary: "Delete a loan's batch guard (LOAN_GUARD#) when the loan is repaid or cancelled (a grant only).",
    env: [],
    secrets: [],
  },
  'audit:append': {
    summary:
      "Put new entries (AUDIT#) of a batch's append-only audit log (a grant only: roles without it may not write AUDIT# items at all).",
    env: [],
    secrets: [],
  },
  'payout-state-machine:start': { summary: 'Start payout lifecycle executions.', env: ['PAYOUT_STATE_MACHINE_ARN'], secrets: [] },
  'payout-state-machine:callback': {
    summary: 'Resume or fail a waiting payout attempt (task token).',
    env: ['PAYOUT_STATE_MACHINE_ARN'],
    secrets: [],
  },
  'payout-request-queue:send': { summary: "Queue a submitted batch's payout.", env: ['PAYOUT_REQUEST_QUEUE_URL'], secrets: [] },
  'manual-review-topic:publish': {
    summary: "Notify cooperative managers (payouts in manual review, a farmer's payout phone changed).",
    env: ['MANUAL_REVIEW_TOPIC_ARN'],
    secrets: [],
  },
  'sms:send': {
    summary:
      "Send an SMS to a farmer's phone through SNS (direct publish to a phone number; SMS_TOPIC_ARN, set only on the local stack, sends it to a stand-in topic instead).",
    env: [],
    secrets: [],
    optionalEnv: ['SMS_TOPIC_ARN'],
  },
  'manual-payout-limit': {
    summary: "The cap on one cooperative's manual payouts per UTC day, USDC (setting manualPayoutDailyLimitUsdc, default 10000).",
    env: ['MANUAL_PAYOUT_DAILY_LIMIT_USDC'],
    secrets: [],
  },
  'payout-balance-alarm': {
    summary:
      'The merchant balance of a payout provider below which the ops are notified and the alarm fires, USD (setting payoutBalanceAlarmUsd, default 1000; docs/operations.md#merchant-balance-alarm).',
    env: ['PAYOUT_BALANCE_ALARM_USD'],
    secrets: [],
  },
  ledger: {
    summary:
      'Sign and send ledger transactions (BatchToken, TraceLog) with the ledger signer: in AWS the KMS key LEDGER_SIGNER_KMS_KEY_ID (ECC_SECG_P256K1; kms:Sign and kms:GetPublicKey on it), so no private key is in the function.',
    env: [
      'LEDGER_RPC_URL',
      'LEDGER_CHAIN_ID',
      'BATCH_TOKEN_ADDRESS',
      'TRACE_LOG_ADDRESS',
      'AUDIT_ANCHOR_ADDRESS',
      'LEDGER_SIGNER_KMS_KEY_ID',
    ],
    secrets: [],
    optionalEnv: ['LEDGER_CUSTODIAN_ADDRESS', 'LEDGER_RPC_RETRY_COUNT'],
    local: {
      env: ['LEDGER_RPC_URL', 'LEDGER_CHAIN_ID', 'BATCH_TOKEN_ADDRESS', 'TRACE_LOG_ADDRESS', 'AUDIT_ANCHOR_ADDRESS'],
      secrets: [/* @__PURE__ */ secretOf('LEDGER_SIGNER_KEY')],
      note: 'no KMS locally: the signer is the key file dev-ledger-signer.key of LOCAL_DATA_DIR, passed as LEDGER_SIGNER_KEY',
    },
    routeTimeoutSeconds: ROUTE_OUTSIDE_CALL_TIMEOUT_SECONDS,
    memoryMiB: LEDGER_MEMORY_MIB,
  },
  'payout-provider': {
    summary:
      'The payout providers of PAYOUT_PROVIDERS in order (docs/api/payouts.md#payout-providers-and-failover): the provider API (PAYOUT_PROVIDER_URL) and pawaPay (PAWAPAY_API_URL, PAWAPAY_USD_UGX_RATE), one secret each.',
    env: ['PAYOUT_PROVIDERS', 'PAYOUT_PROVIDER_URL', 'PAWAPAY_API_URL', 'PAWAPAY_USD_UGX_RATE'],
    secrets: [/* @__PURE__ */ secretOf('PAYOUT_PROVIDER_CREDENTIALS'), /* @__PURE__ */ secretOf('PAWAPAY_CREDENTIALS')],
    routeTimeoutSeconds: ROUTE_OUTSIDE_CALL_TIMEOUT_SECONDS,
  },
  'payout-webhook-secret': {
    summary: "Verify the payout provider's signed webhooks.",
    env: [],
    secrets: [/* @__PURE__ */ secretOf('PAYOUT_WEBHOOK_SECRET')],
  },
  'chain-webhook-secret': {
    summary: "Verify the chain-event provider's signed webhooks.",
    env: [],
    secrets: [/* @__PURE__ */ secretOf('CHAIN_WEBHOOK_SECRET')],
  },
  'ledger-write-queue:send': {
    summary: 'Queue a ledger write for the single ledger writer.',
    env: ['LEDGER_WRITE_QUEUE_URL'],
    secrets: [],
  },
  'ledger-receipt-queue:send': {
    summary: 'Queue a receipt check of a sent batched ledger transaction (the single ledger writer).',
    env: ['LEDGER_RECEIPT_QUEUE_URL'],
    secrets: [],
  },
  'ledger:read': {
    summary: 'Read the chain, no signing key (audit verification and its anchors, chain-event checks).',
    env: ['LEDGER_RPC_URL', 'LEDGER_CHAIN_ID', 'BATCH_TOKEN_ADDRESS', 'TRACE_LOG_ADDRESS', 'AUDIT_ANCHOR_ADDRESS'],
    secrets: [],
  },
  vault: {
    summary:
      'Sign and send lending-vault transactions (LendingVault: deposits, loans, repayments) with the ledger signer, its OPERATOR_ROLE holder.',
    env: [
      'LEDGER_RPC_URL',
      'LEDGER_CHAIN_ID',
      'BATCH_TOKEN_ADDRESS',
      'TRACE_LOG_ADDRESS',
      'AUDIT_ANCHOR_ADDRESS',
      'LENDING_VAULT_ADDRESS',
      'VAULT_ASSET_ADDRESS',
      'LEDGER_SIGNER_KMS_KEY_ID',
    ],
    secrets: [],
    optionalEnv: ['LEDGER_CUSTODIAN_ADDRESS', 'LEDGER_RPC_RETRY_COUNT'],
    local: {
      env: [
        'LEDGER_RPC_URL',
        'LEDGER_CHAIN_ID',
        'BATCH_TOKEN_ADDRESS',
        'TRACE_LOG_ADDRESS',
        'AUDIT_ANCHOR_ADDRESS',
        'LENDING_VAULT_ADDRESS',
        'VAULT_ASSET_ADDRESS',
      ],
      secrets: [/* @__PURE__ */ secretOf('LEDGER_SIGNER_KEY')],
      note: 'no KMS locally: the signer is the key file dev-ledger-signer.key of LOCAL_DATA_DIR, passed as LEDGER_SIGNER_KEY',
    },
    routeTimeoutSeconds: ROUTE_OUTSIDE_CALL_TIMEOUT_SECONDS,
    memoryMiB: LEDGER_MEMORY_MIB,
  },
  'vault:read': {
    summary: 'Read the lending vault, no signing key (figures, MFI positions, buyer payments).',
    env: ['LEDGER_RPC_URL', 'LEDGER_CHAIN_ID', 'LENDING_VAULT_ADDRESS'],
    secrets: [],
    optionalEnv: ['LEDGER_RPC_RETRY_COUNT'],
  },
  'pin-store': {
    summary:
      'Keep evidence (docs/api/evidence.md#evidence-on-ipfs): its CAR (car/<cid>.car) and files (files/<cid>/<name>) put in the own evidence bucket before the commit (no read), and a pin job on the evidence pin queue.',
    env: ['EVIDENCE_BUCKET', 'EVIDENCE_PIN_QUEUE_URL'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3', 'IPFS_GATEWAY_URL'],
  },
  'evidence-archive:read': {
    summary: 'Read evidence CARs (car/) from the own evidence bucket.',
    env: ['EVIDENCE_BUCKET'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3'],
  },
  'evidence-files:read': {
    summary: 'Presigned GETs of evidence files (files/<cid>/<name>) of the own evidence bucket.',
    env: ['EVIDENCE_BUCKET'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3'],
  },
  'evidence-pin-queue:send': { summary: 'Queue an evidence pin job.', env: ['EVIDENCE_PIN_QUEUE_URL'], secrets: [] },
  'order-work-queue:send': {
    summary: "Queue a large purchase order's per-batch work (confirmation, settlement) for the order worker.",
    env: ['ORDER_WORK_QUEUE_URL'],
    secrets: [],
  },
  'dds-documents:write': {
    summary:
      "Keep due diligence statements' documents (dds/<dds_id>/<sha256>.json and .xml) in the own evidence bucket, under dds/ only (s3:PutObject, no read).",
    env: ['EVIDENCE_BUCKET'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3'],
  },
  'dds-documents:read': {
    summary:
      "Read due diligence statements' documents (dds/) from the own evidence bucket, or hand out presigned GETs of them (s3:GetObject; s3:ListBucket of dds/).",
    env: ['EVIDENCE_BUCKET'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3'],
  },
  'evidence-pinning': {
    summary:
      'The IPFS pinning service evidence CARs are uploaded to: EVIDENCE_PINNING_API `s3` (an S3-compatible pinning API: PutObject with metadata import=car into EVIDENCE_PINNING_BUCKET at EVIDENCE_PINNING_ENDPOINT, credentials {access_key_id, secret_access_key}) or `kubo` (POST <EVIDENCE_PINNING_ENDPOINT>/api/v0/dag/import, credentials {authorization} or {}).',
    env: ['EVIDENCE_PINNING_API', 'EVIDENCE_PINNING_ENDPOINT', 'EVIDENCE_PINNING_BUCKET', 'EVIDENCE_PINNING_REGION'],
    secrets: [/* @__PURE__ */ secretOf('EVIDENCE_PINNING_CREDENTIALS')],
  },
  gfw: {
    summary: 'Global Forest Watch Data API (integrated deforestation alerts).',
    env: ['GFW_API_URL'],
    secrets: [/* @__PURE__ */ secretOf('GFW_API_KEY')],
    local: { env: [], secrets: [], note: 'no GFW key: the bundled alert areas answer the forest check offline' },
  },
  maaif: { summary: 'The national farmer registry (MAAIF).', env: ['MAAIF_API_URL'], secrets: [/* @__PURE__ */ secretOf('MAAIF_API_KEY')] },
  'dds-filing-queue:send': { summary: 'Queue a DDS filing.', env: ['DDS_FILING_QUEUE_URL'], secrets: [] },
  'eudr-registry': {
    summary: "The EU Information System's DDS service (SOAP, WS-Security).",
    env: ['EUDR_DDS_ENDPOINT', 'EUDR_USERNAME', 'EUDR_CLIENT_ID'],
    secrets: [/* @__PURE__ */ secretOf('EUDR_AUTH_KEY')],
    optionalEnv: ['EUDR_DDS_TIMEOUT_MS'],
  },
  'token-issuer': {
    summary: 'The token issuer the authorizer trusts (docs/security.md#tokens-and-roles).',
    env: ['JWT_ISSUER', 'JWT_AUDIENCE', 'JWKS_URL'],
    secrets: [],
  },
  onramp: {
    summary:
      "The fiat on-ramp's API (MFI deposits); LEDGER_TREASURY_ADDRESS is the ledger signer's address, where the on-ramp delivers USDC.",
    env: ['ONRAMP_URL', 'LEDGER_TREASURY_ADDRESS'],
    secrets: [/* @__PURE__ */ secretOf('ONRAMP_CREDENTIALS')],
    routeTimeoutSeconds: ROUTE_OUTSIDE_CALL_TIMEOUT_SECONDS,
  },
  'onramp-webhook-secret': {
    summary: "Verify the fiat on-ramp's signed webhooks.",
    env: [],
    secrets: [/* @__PURE__ */ secretOf('ONRAMP_WEBHOOK_SECRET')],
  },
  'price-feed': {
    summary: 'The published coffee price feed (USD per kg by grade, with updated_at) that values loan collateral.',
    env: ['PRICE_FEED_URL'],
    secrets: [/* @__PURE__ */ secretOf('PRICE_FEED_TOKEN')],
    local: {
      env: ['PRICE_FEED_FILE'],
      secrets: [],
      note: 'the local stack writes $LOCAL_DATA_DIR/price-feed.json at start and points PRICE_FEED_FILE at it (read at each use, so an operator can edit it)',
    },
  },
  'outbound-webhook-queue:send': {
    summary: 'Queue an outbound webhook delivery attempt.',
    env: ['OUTBOUND_WEBHOOK_QUEUE_URL'],
    secrets: [],
    optionalEnv: ['OUTBOUND_WEBHOOK_TIME_SCALE'],
  },
  'evidence-uploads:presign': {
    summary:
      'Presigned PUTs (s3:PutObject under evidence-uploads/) into the evidence uploads bucket EVIDENCE_UPLOADS_BUCKET; AWS_ENDPOINT_URL_S3 points at an S3-compatible endpoint instead (path-style; the local fauxqs).',
    env: ['EVIDENCE_UPLOADS_BUCKET'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3'],
  },
  'evidence-uploads:read': {
    summary:
      'Read evidence photo uploads (s3:GetObject under evidence-uploads/) from EVIDENCE_UPLOADS_BUCKET; AWS_ENDPOINT_URL_S3 as above.',
    env: ['EVIDENCE_UPLOADS_BUCKET'],
    secrets: [],
    optionalEnv: ['AWS_ENDPOINT_URL_S3'],
  },
  'outbound-webhooks': {
    summary:
      "POST signed webhooks to integrators' URLs: https resolving to public addresses only (checked at registration and at each connection).",
    env: [],
    secrets: [],
    optionalEnv: ['OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK'],
  },
  'chain-watch': {
    summary:
      "Tuning of the scheduled chain watcher: blocks a log must be buried under (CHAIN_WATCH_CONFIRMATIONS), where a new cursor starts (CHAIN_WATCH_START_BLOCK, the contracts' deployment block), blocks per eth_getLogs range and ranges per run.",
    env: ['CHAIN_WATCH_CONFIRMATIONS', 'CHAIN_WATCH_START_BLOCK'],
    secrets: [],
    optionalEnv: ['CHAIN_WATCH_MAX_BLOCK_RANGE', 'CHAIN_WATCH_MAX_RANGES_PER_RUN'],
  },
  'outbound-secrets:seal': {
    summary:
      'Seal outbound webhook signing secrets before they are stored: a data key from KMS GenerateDataKey under OUTBOUND_SECRET_KMS_KEY_ID (encryption context endpoint_id), AES-256-GCM in the function.',
    env: ['OUTBOUND_SECRET_KMS_KEY_ID'],
    secrets: [],
    local: {
      env: ['OUTBOUND_SECRET_KEY_FILE'],
      secrets: [],
      note: 'no KMS locally: the same envelope code wraps data keys with the key file outbound-secrets.key of LOCAL_DATA_DIR (created at start, mode 0600)',
    },
  },
  'outbound-secrets:open': {
    summary:
      'Open sealed outbound webhook signing secrets to sign a delivery: KMS Decrypt of the data key under OUTBOUND_SECRET_KMS_KEY_ID with the same encryption context.',
    env: ['OUTBOUND_SECRET_KMS_KEY_ID'],
    secrets: [],
    local: { env: ['OUTBOUND_SECRET_KEY_FILE'], secrets: [], note: 'no KMS locally: the key file outbound-secrets.key of LOCAL_DATA_DIR' },
  },
  'loan-terms': {
    summary:
      'Loan terms: a loan is due LOAN_TERM_DAYS whole days after its creation (default 180); 90 days past due it is DEFAULTED and written off.',
    env: ['LOAN_TERM_DAYS'],
    secrets: [],
  },
} as const satisfies Record<Need, NeedSpec>;

/** Every required variable name any Need provides (not the secrets' variables). */
export type NeedEnvName = (typeof NEEDS)[Need]['env'][number];
/** Every secret name any Need carries. */
export type SecretName = (typeof NEEDS)[Need]['secrets'][number]['name'];

/**
 * Set by the CDK stack on every function (values in infra/stack/coffee-trace-stack.ts); the local
 * stack sets PUBLIC_BASE_URL, SERVICE_RUNTIME (`local`) and DOCS_BASE_URL itself.
 * PUBLIC_BASE_URL: the base of every absolute link (trace page, QR code, docs, OpenAPI server).
 * SERVICE_RUNTIME: `aws` in the stack (HSTS; PUBLIC_BASE_URL must be https), `local` locally.
 */
export const COMMON_ENV = [
  'POWERTOOLS_SERVICE_NAME',
  'POWERTOOLS_METRICS_NAMESPACE',
  'LOG_LEVEL',
  'DOCS_BASE_URL',
  'PUBLIC_BASE_URL',
  'SERVICE_RUNTIME',
  'AWS_NODEJS_CONNECTION_REUSE_ENABLED',
] as const;
export type CommonEnvName = (typeof COMMON_ENV)[number];

/**
 * Variables the code may read that no Need provides: set by the Lambda runtime or an extension,
 * read with a default (tunables), or used by local tooling only. Anything else the code reads must
 * come from a Need (a test greps the sources).
 */
export const UNDECLARED_ENV: Readonly<Record<string, string>> = {
  AWS_REGION: 'set by the Lambda runtime (locally by the local stack)',
  AWS_SESSION_TOKEN: 'set by the Lambda runtime; authenticates calls to the Parameters and Secrets extension',
  PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: "set by CDK's paramsAndSecrets on functions that read secrets (default 2773)",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'defaulted to true by shared/runtime/polyfills.ts',
  REPO_ROOT: 'local tooling only (shared/runtime/paths.ts)',
  SUBMIT_RECEIPT_WAIT_MS: 'tunable, default 4000: how long POST /batch/submit waits for the mint receipt',
  STAGE_LEDGER_WAIT_MS: 'tunable, default 4000: how long PATCH /batch/{id}/stage waits for its trace-log transaction',
  LOAN_APR:
    "tunable, default 0.12 (DEFAULT_LOAN_APR, shared/domain/lending.ts): the vault's annual simple-interest rate (loans, GET /mfi/vault)",
  AWS_LAMBDA_FUNCTION_NAME: 'set by the Lambda runtime; shared/runtime/metrics.ts writes EMF lines to stdout only there',
  AWS_EXECUTION_ENV:
    'set by the Lambda runtime; shared/runtime/tracer.ts loads the Powertools Tracer (and the X-Ray SDK) only where it is set, as Powertools enables tracing only there',
  AWS_SAM_LOCAL: 'set by the SAM CLI; tracing stays off and the Tracer unloaded there (Powertools rule, shared/runtime/tracer.ts)',
  POWERTOOLS_TRACE_ENABLED:
    'tunable, Powertools default true (not set by the stack): `false` turns tracing off, and shared/runtime/tracer.ts then loads neither the Tracer nor the X-Ray SDK (docs/powertools.md#tracing-loads-only-when-enabled)',
  _HANDLER: 'set by the Lambda runtime (module.export of the entry); shared/runtime/instrument.ts names the handler subsegment after it',
  METRICS_FILE:
    'local stack only: the file EMF metric lines are appended to ($LOCAL_DATA_DIR/metrics.ndjson; unset in Lambda, where they go to stdout)',
  ANCHOR_INTERVAL_S:
    "tunable, default 300: seconds between periodic audit anchors (docs/api/anchoring.md#anchoring-of-the-audit-log): the CDK context key at deploy, the environment locally (scaled by LOCAL_TIME_SCALE); the audit-anchorer schedule's intervalVariable",
  RECONCILE_AFTER_SECONDS: 'tunable, default 300: idle time before reconciliation acts (locally scaled by LOCAL_TIME_SCALE)',
  DDS_XML_INLINE_MAX_BYTES:
    'tunable, default 4194304 (4 MiB): the largest SubmitDdsRequest XML GET /eudr/dds/{id}/xml answers inline; a larger one is answered 303 with a 5-minute presigned URL of its kept document (a Lambda answer is at most 6 MB)',
  DDS_POLL_DELAY_S:
    'tunable, default 10: seconds the DDS filer waits after submitting (or amending) a statement before its first status poll of the EU Information System (locally scaled by LOCAL_TIME_SCALE)',
  SECRET_CACHE_TTL_S:
    'tunable, default 300: seconds a secret read from Secrets Manager is kept before it is read again (shared/config.ts), so a rotated inbound webhook secret is picked up without a redeploy',
  LEDGER_WRITE_MAX_ATTEMPTS:
    "tunable, default 8 (DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS, shared/use-cases/ledger-writer.ts): failed attempts of one ledger write (transport failures of the ledger endpoint not counted) before the single writer parks it; below the ledger-write queue's maxReceiveCount",
  CHAIN_WATCH_MAX_EVENT_ATTEMPTS:
    'tunable, default 5 (DEFAULT_MAX_EVENT_ATTEMPTS, shared/use-cases/chain-watch.ts): runs in which one chain event may fail before the watcher parks it and moves its cursor on',
};
