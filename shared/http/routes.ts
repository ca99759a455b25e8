/**
 * The route table: data only, importing no handler. Both the CDK stack (one API Gateway method and
 * one Lambda function per route) and the local gateway (infra/local/gateway.ts) are built from it,
 * so what runs locally is what is deployed.
 *
 * `fn` names the function folder: `functions/<fn>/handler.ts` exporting `handler`.
 * `auth`: `jwt` routes sit behind the shared Lambda REQUEST authorizer (functions/authorizer);
 * `webhook` routes check a Standard Webhooks signature themselves; `public` routes need nothing.
 * `needs` lists what the function touches, so CDK grants exactly that and nothing more.
 */

export type HttpMethod = 'GET' | 'POST' | 'PATCH';
export type RouteAuth = 'jwt' | 'webhook' | 'public';

/** Outside systems and resources a function may use; CDK turns each into env vars and grants. */
export type Need =
  | 'table:read'
  | 'table:write'
  /** Delete a payout that never reached the provider, with its guard (PAYMENT#, PAYOUT_GUARD# only). */
  | 'payout:discard'
  | 'payout-state-machine:start'
  | 'payout-state-machine:callback'
  | 'payout-request-queue:send'
  | 'manual-review-topic:publish'
  | 'ledger'
  | 'payout-provider'
  | 'payout-webhook-secret'
  | 'chain-webhook-secret'
  | 'ledger-write-queue:send'
  /** Read the chain (no signing key): audit verification. */
  | 'ledger:read'
  /** Pin evidence to IPFS (a Pinning Service API in AWS, the local pin store locally). */
  | 'pin-store'
  | 'gfw'
  | 'maaif'
  | 'national-check-queue:send'
  | 'dds-filing-queue:send'
  | 'eudr-registry';

export interface RouteDef {
  method: HttpMethod;
  /** API Gateway path syntax: `/batch/{id}`. */
  path: string;
  fn: string;
  auth: RouteAuth;
  needs: Need[];
  /** Largest accepted request body in bytes (decisions §5); default 1 MiB. */
  maxBodyBytes?: number;
  summary: string;
}

/** Functions that are not behind an HTTP route: state-machine tasks and queue consumers. */
export interface WorkerDef {
  fn: string;
  kind: 'state-machine-task' | 'queue-consumer' | 'scheduled';
  /** For scheduled workers: an EventBridge schedule expression (locally a timer, scaled by LOCAL_TIME_SCALE). */
  schedule?: string;
  /** For queue consumers: which queue feeds it. */
  queue?: 'payout-request-queue' | 'ledger-write-queue' | 'dds-filing-queue' | 'national-check-queue';
  /** For state-machine tasks: the ASL definition-substitution key holding its ARN. */
  substitution?: string;
  needs: Need[];
  timeoutSeconds: number;
  summary: string;
}

export const MIB = 1024 * 1024;

export const routes: RouteDef[] = [
  { method: 'POST', path: '/cooperatives', fn: 'create-cooperative', auth: 'jwt', needs: ['table:write'], summary: 'Register a cooperative (ADMIN).' },
  { method: 'PATCH', path: '/cooperatives/{id}', fn: 'update-cooperative', auth: 'jwt', needs: ['table:write'], summary: 'Change licence, manager or prices (ADMIN).' },
  { method: 'GET', path: '/cooperatives/{id}', fn: 'get-cooperative', auth: 'jwt', needs: ['table:read'], summary: 'Read a cooperative.' },
  { method: 'GET', path: '/cooperatives/{id}/holding-balance', fn: 'get-holding-balance', auth: 'jwt', needs: ['table:read'], summary: 'USDC held for the cooperative from payouts in manual review (ADMIN, the cooperative).' },
  { method: 'POST', path: '/farmers/register', fn: 'register-farmer', auth: 'jwt', needs: ['table:write', 'gfw', 'maaif', 'national-check-queue:send'], summary: 'Register a farmer and forest-check the farm.' },
  { method: 'GET', path: '/farmers/{id}', fn: 'get-farmer', auth: 'jwt', needs: ['table:read'], summary: 'Read a farmer (phone masked).' },
  { method: 'POST', path: '/batch/submit', fn: 'submit-batch', auth: 'jwt', needs: ['table:write', 'ledger-write-queue:send'], summary: 'Record a delivered batch: mint its BatchToken and start the farmer payout.' },
  { method: 'POST', path: '/v1/batch/submit', fn: 'submit-batch', auth: 'jwt', needs: ['table:write', 'ledger-write-queue:send'], summary: 'Same as POST /batch/submit.' },
  { method: 'PATCH', path: '/batch/{id}/stage', fn: 'update-batch-stage', auth: 'jwt', needs: ['table:write', 'pin-store', 'ledger-write-queue:send'], maxBodyBytes: 6 * MIB, summary: 'Move a batch to its next custody stage with evidence (trace log, audit log, IPFS).' },
  { method: 'GET', path: '/batch/{id}/audit', fn: 'get-batch-audit', auth: 'jwt', needs: ['table:read', 'ledger:read', 'pin-store'], summary: 'The batch\'s hash-chained audit log, verified against the trace log and the pinned evidence.' },
  { method: 'POST', path: '/purchase-orders', fn: 'create-purchase-order', auth: 'jwt', needs: ['table:write'], summary: 'Create a purchase order over batches (DRAFT).' },
  { method: 'POST', path: '/purchase-orders/{id}/confirm', fn: 'confirm-purchase-order', auth: 'jwt', needs: ['table:write', 'pin-store', 'ledger-write-queue:send'], summary: 'Confirm a purchase order: its WAREHOUSED batches move to COMMITTED.' },
  { method: 'GET', path: '/batch/{id}', fn: 'get-batch', auth: 'jwt', needs: ['table:read'], summary: 'Read a batch with its stage history.' },
  { method: 'GET', path: '/jobs/{id}', fn: 'get-job', auth: 'jwt', needs: ['table:read'], summary: 'Poll an asynchronous operation.' },
  { method: 'POST', path: '/payments/farmer-payout', fn: 'create-farmer-payout', auth: 'jwt', needs: ['table:write', 'payout:discard', 'payout-provider', 'payout-state-machine:start'], summary: 'Pay a farmer to mobile money.' },
  { method: 'GET', path: '/payments/farmer-payout/{id}', fn: 'get-farmer-payout', auth: 'jwt', needs: ['table:read'], summary: 'Status of a farmer payout.' },
  { method: 'GET', path: '/payments/{id}', fn: 'get-payment', auth: 'jwt', needs: ['table:read'], summary: 'A payment record of any type.' },
  { method: 'GET', path: '/payments', fn: 'list-payments', auth: 'jwt', needs: ['table:read'], summary: 'Payments of a batch, paginated.' },
  { method: 'POST', path: '/api/webhooks/payout-provider', fn: 'payout-provider-webhook', auth: 'webhook', needs: ['table:write', 'payout-state-machine:callback', 'payout-webhook-secret'], summary: 'Signed settlement webhooks from the payout provider.' },
  { method: 'POST', path: '/eudr/verify-gfw', fn: 'verify-gfw', auth: 'jwt', needs: ['table:write', 'gfw'], summary: 'Check a farm against deforestation alerts after 2020-12-31 again.' },
  { method: 'GET', path: '/cooperatives/{id}/flagged-farms', fn: 'list-flagged-farms', auth: 'jwt', needs: ['table:read'], summary: 'Farms the forest check flagged: the manual-review list of a cooperative.' },
  { method: 'POST', path: '/eudr/generate-dds', fn: 'generate-dds', auth: 'jwt', needs: ['table:write', 'pin-store', 'dds-filing-queue:send'], summary: 'Generate a batch\'s due diligence statement and file it with the EU Information System.' },
  { method: 'GET', path: '/eudr/dds/{id}', fn: 'get-dds', auth: 'jwt', needs: ['table:read'], summary: 'A due diligence statement with its filing state.' },
  { method: 'GET', path: '/eudr/dds/{id}/xml', fn: 'get-dds-xml', auth: 'jwt', needs: ['table:read'], summary: 'The SubmitDdsRequest XML of a due diligence statement.' },
  { method: 'POST', path: '/api/webhooks/chain-events', fn: 'chain-events-webhook', auth: 'webhook', needs: ['table:write', 'payout:discard', 'payout-provider', 'payout-state-machine:start', 'chain-webhook-secret'], summary: 'Signed chain events (batch.stage_changed); EXPORTED starts the TOP_UP payout.' },
  { method: 'GET', path: '/openapi.json', fn: 'get-openapi', auth: 'public', needs: [], summary: 'The OpenAPI 3.1 document.' },
  { method: 'GET', path: '/docs', fn: 'get-docs', auth: 'public', needs: [], summary: 'The rendered API reference and error-code reference.' },
];

export const workers: WorkerDef[] = [
  { fn: 'payout-attempt', kind: 'state-machine-task', substitution: 'PayoutAttemptFunctionArn', needs: ['table:write', 'payout-provider', 'payout-state-machine:callback'], timeoutSeconds: 30, summary: 'Creates (idempotently) the provider order of one attempt and parks the task token.' },
  { fn: 'payout-check-attempt', kind: 'state-machine-task', substitution: 'PayoutCheckAttemptFunctionArn', needs: ['table:write', 'payout-provider'], timeoutSeconds: 30, summary: 'After a failure or timeout, reads the attempt\'s final status from the provider and decides: completed, still pending, retry, or exhausted.' },
  { fn: 'payout-manual-review', kind: 'state-machine-task', substitution: 'PayoutManualReviewFunctionArn', needs: ['table:write', 'manual-review-topic:publish'], timeoutSeconds: 30, summary: 'Moves the payout to MANUAL_REVIEW and notifies the cooperative manager.' },
  { fn: 'ledger-writer', kind: 'queue-consumer', queue: 'ledger-write-queue', needs: ['table:write', 'ledger', 'payout-request-queue:send'], timeoutSeconds: 60, summary: 'The single ledger writer: lands trace-log transactions in order, re-sending the same signed transaction until mined.' },
  { fn: 'national-registry-check', kind: 'queue-consumer', queue: 'national-check-queue', needs: ['table:write', 'maaif'], timeoutSeconds: 20, summary: 'Completes farmer registrations that waited for the national farmer registry (MAAIF).' },
  { fn: 'dds-filer', kind: 'queue-consumer', queue: 'dds-filing-queue', needs: ['table:write', 'eudr-registry', 'manual-review-topic:publish'], timeoutSeconds: 30, summary: 'Files due diligence statements with the EU Information System and waits for their reference numbers.' },
  { fn: 'payout-reconciler', kind: 'scheduled', schedule: 'rate(5 minutes)', needs: ['table:write', 'payout:discard', 'payout-provider', 'payout-state-machine:start', 'payout-state-machine:callback', 'payout-request-queue:send', 'ledger-write-queue:send'], timeoutSeconds: 120, summary: 'Asks the provider about payouts with no activity for 5 minutes and settles, fails or restarts them; requeues batches still without their payout and unconfirmed trace-log writes.' },
  { fn: 'batch-payout-starter', kind: 'queue-consumer', queue: 'payout-request-queue', needs: ['table:write', 'payout:discard', 'payout-provider', 'payout-state-machine:start'], timeoutSeconds: 60, summary: 'Starts the NET_COFFEE_PAYMENT payout of a submitted batch.' },
];

/** The shared REQUEST authorizer's function folder. */
export const AUTHORIZER_FN = 'authorizer';
