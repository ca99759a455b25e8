/**
 * Typed fakes of the ports (shared/domain/ports/<area>.ts) and builders of complete records
 * (shared/domain/records.ts) for unit tests of the use cases (shared/use-cases/*).
 *
 * Every `fake<Port>(over)` returns an object literal that implements every method of the port, so
 * a use case's deps type-check without casts. Each method a test does not override throws
 * `Error('unexpected call: <deps key>.<method>')` synchronously when called, so a use case that
 * reaches a port the test did not expect fails loudly instead of getting `undefined`. A test hands
 * in only the methods it expects to be called:
 *
 *   const payouts = fakePayoutStore({ get: async (id) => (id === p.payment_id ? p : null) });
 *
 * The record builders (`aBatch`, `aFarmer`, `aCooperative`, `aPayout`, `aLedgerTx`) return complete,
 * valid records of one coherent world — cooperative COOP-1, its farmer F-1, that farmer's batch
 * BATCH-2026-000001 (DELIVERED, mint confirmed), its first payout PAY-2026-000001-01 — with `over`
 * applied on top. Identifiers derived from a batch id (year, number, token id, payout and ledger
 * write ids) follow an overridden `batch_id` unless they are overridden too.
 */

import { DomainError } from '../../../shared/domain/errors';
import { formatPayoutId, parseBatchId, tokenIdForBatch } from '../../../shared/domain/ids';
import type { BatchStore, CustodyStore, OrderWorkIndex } from '../../../shared/domain/ports/batches';
import type { Loan } from '../../../shared/domain/lending';
import type { LoanStore } from '../../../shared/domain/ports/lending';
import { createHash } from 'node:crypto';
import type { DdsDocumentStore, DdsRegistry, DdsStore } from '../../../shared/domain/ports/eudr';
import type { EvidenceArchive, EvidencePinMessage } from '../../../shared/domain/ports/evidence';
import type { Ledger, TraceLogReader } from '../../../shared/domain/ports/ledger';
import type { Notifier, WebhookReceiptStore, WorkQueue } from '../../../shared/domain/ports/messaging';
import type { PayoutProvider, PayoutResolutionStore, PayoutStore, PayoutWorkflow } from '../../../shared/domain/ports/payouts';
import type { FarmerPhoneStore, ForestCheck, NationalFarmerRegistry, RegistryStore } from '../../../shared/domain/ports/registry';
import type { Batch, BatchLedgerTx, Cooperative, Farmer, Payout } from '../../../shared/domain/records';

/** What every fake method does unless the test overrides it. */
function unexpected(name: string): never {
  throw new Error(`unexpected call: ${name}`);
}

// ------------------------------------------------------------------ stores

export function fakeRegistryStore(over: Partial<RegistryStore> = {}): RegistryStore {
  return {
    createCooperative: () => unexpected('registry.createCooperative'),
    getCooperative: () => unexpected('registry.getCooperative'),
    updateCooperative: () => unexpected('registry.updateCooperative'),
    getHolding: () => unexpected('registry.getHolding'),
    flaggedFarmers: () => unexpected('registry.flaggedFarmers'),
    setForestCheck: () => unexpected('registry.setForestCheck'),
    createFarmer: () => unexpected('registry.createFarmer'),
    pendingNationalChecks: () => unexpected('registry.pendingNationalChecks'),
    settleNationalCheck: () => unexpected('registry.settleNationalCheck'),
    getFarmer: () => unexpected('registry.getFarmer'),
    ...over,
  };
}

export function fakeBatchStore(over: Partial<BatchStore> = {}): BatchStore {
  const store: BatchStore = {
    nextBatchNumber: () => unexpected('batches.nextBatchNumber'),
    putPending: () => unexpected('batches.putPending'),
    markMintFailed: () => unexpected('batches.markMintFailed'),
    confirmMint: () => unexpected('batches.confirmMint'),
    getAny: () => unexpected('batches.getAny'),
    get: () => unexpected('batches.get'),
    setPaymentStatus: () => unexpected('batches.setPaymentStatus'),
    auditEntries: () => unexpected('batches.auditEntries'),
    awaitingPayoutBefore: () => unexpected('batches.awaitingPayoutBefore'),
    listByFarmer: () => unexpected('batches.listByFarmer'),
    putJob: () => unexpected('batches.putJob'),
    getJob: () => unexpected('batches.getJob'),
    // Batched reads: each batch as `get` reads it, unless a test gives its own.
    getMany: (ids) => Promise.all(ids.map((id) => store.get(id))),
    ...over,
  };
  return store;
}

/** Batch reads over one `get`: `getMany` reads each as `get` does. */
export function batchReads(get: BatchStore['get']): Pick<BatchStore, 'get' | 'getMany'> {
  return { get, getMany: (ids) => Promise.all(ids.map((id) => get(id))) };
}

/** The loans of batches over one per-batch lookup: `activeForBatches` asks it for each batch. */
export function loansByBatch(activeForBatch: (batchId: string) => Promise<Loan | null>): Pick<LoanStore, 'activeForBatches'> {
  return { activeForBatches: (ids) => Promise.all(ids.map((id) => activeForBatch(id))) };
}

export function fakePayoutStore(over: Partial<PayoutStore> = {}): PayoutStore {
  return {
    createPending: () => unexpected('payouts.createPending'),
    discardUnsent: () => unexpected('payouts.discardUnsent'),
    markOrderUnknown: () => unexpected('payouts.markOrderUnknown'),
    claimOrderUnknown: async () => null, // no payout left with its order unknown
    markProcessing: () => unexpected('payouts.markProcessing'),
    markFirstOrderRejected: () => unexpected('payouts.markFirstOrderRejected'),
    registerAttempt: () => unexpected('payouts.registerAttempt'),
    setAttemptOrder: () => unexpected('payouts.setAttemptOrder'),
    recordSettlement: () => unexpected('payouts.recordSettlement'),
    recordFailure: () => unexpected('payouts.recordFailure'),
    scheduleRetry: () => unexpected('payouts.scheduleRetry'),
    markManualReview: () => unexpected('payouts.markManualReview'),
    markManagerNotified: () => unexpected('payouts.markManagerNotified'),
    openBefore: () => unexpected('payouts.openBefore'),
    get: () => unexpected('payouts.get'),
    listByBatch: () => unexpected('payouts.listByBatch'),
    ...over,
  };
}

/**
 * A payout store keeping the one-payout-per-batch-and-reason guard in memory (as the payout
 * guard item does): a second creation is DUPLICATE_PAYOUT; created payouts land in `created`
 * (a discarded one leaves it). Other methods as {@link fakePayoutStore}, overridable.
 */
export function fakeGuardedPayoutStore(created: Payout[], over: Partial<PayoutStore> = {}): PayoutStore {
  const guards = new Set<string>();
  return fakePayoutStore({
    createPending: async (p) => {
      const k = `${p.batch_id}#${p.reason}`;
      if (guards.has(k)) throw new DomainError('DUPLICATE_PAYOUT', `A ${p.reason} payout for batch ${p.batch_id} already exists.`);
      guards.add(k);
      created.push(p);
    },
    discardUnsent: async (p) => {
      guards.delete(`${p.batch_id}#${p.reason}`);
      created.splice(created.indexOf(p), 1);
    },
    markProcessing: async (p, order) => ({ ...p, status: 'PROCESSING', provider_order_id: order.order_id }),
    ...over,
  });
}

export function fakeFarmerPhoneStore(over: Partial<FarmerPhoneStore> = {}): FarmerPhoneStore {
  return {
    updateFarmerPhone: () => unexpected('phones.updateFarmerPhone'),
    ...over,
  };
}

export function fakePayoutResolutionStore(over: Partial<PayoutResolutionStore> = {}): PayoutResolutionStore {
  return {
    resolvePaidInCash: () => unexpected('resolutions.resolvePaidInCash'),
    resolveRetry: () => unexpected('resolutions.resolveRetry'),
    ...over,
  };
}

/**
 * The order-work index as the order worker and the settlement paths use it, in memory: the orders
 * whose SETTLE work is marked (a SETTLE run that leaves nothing removes its order) and the calls made.
 */
export function memoryOrderWorkIndex(): Pick<OrderWorkIndex, 'markSettleWork' | 'touchWork' | 'finishSettleWork'> & {
  marked: Set<string>;
  calls: string[];
} {
  const marked = new Set<string>();
  const calls: string[] = [];
  return {
    marked,
    calls,
    markSettleWork: async (id) => {
      calls.push(`mark ${id}`);
      marked.add(id);
    },
    touchWork: async (id) => {
      calls.push(`touch ${id}`);
      return marked.has(id);
    },
    finishSettleWork: async (id) => {
      calls.push(`finish ${id}`);
      return marked.delete(id);
    },
  };
}

export function fakeCustodyStore(over: Partial<CustodyStore> = {}): CustodyStore {
  return {
    commitStage: () => unexpected('custody.commitStage'),
    getLedgerTx: () => unexpected('custody.getLedgerTx'),
    keepSigned: () => unexpected('custody.keepSigned'),
    confirm: () => unexpected('custody.confirm'),
    attachJob: () => unexpected('custody.attachJob'),
    markFailed: () => unexpected('custody.markFailed'),
    openLedgerTxsBefore: () => unexpected('custody.openLedgerTxsBefore'),
    createPurchaseOrder: () => unexpected('custody.createPurchaseOrder'),
    beginPurchaseOrderCreation: () => unexpected('custody.beginPurchaseOrderCreation'),
    bindPurchaseOrderStep: () => unexpected('custody.bindPurchaseOrderStep'),
    failPurchaseOrderCreation: () => unexpected('custody.failPurchaseOrderCreation'),
    releasePurchaseOrderBatches: () => unexpected('custody.releasePurchaseOrderBatches'),
    getPurchaseOrder: () => unexpected('custody.getPurchaseOrder'),
    confirmPurchaseOrder: () => unexpected('custody.confirmPurchaseOrder'),
    beginPurchaseOrderConfirmation: () => unexpected('custody.beginPurchaseOrderConfirmation'),
    confirmPurchaseOrderBatch: () => unexpected('custody.confirmPurchaseOrderBatch'),
    recordConfirmationProgress: () => unexpected('custody.recordConfirmationProgress'),
    ...over,
  };
}

/**
 * An in-memory document store of statements, with the S3 store's key form
 * (`dds/<dds_id>/<sha256>.json|.xml`) and refs; `objects` is its content, for tests to inspect or corrupt.
 */
export function memoryDdsDocumentStore(): DdsDocumentStore & { objects: Map<string, Uint8Array> } {
  const objects = new Map<string, Uint8Array>();
  return {
    objects,
    put: async (ddsId, name, text) => {
      const bytes = new TextEncoder().encode(text);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const key = `dds/${ddsId}/${sha256}.${name === 'dds.json' ? 'json' : 'xml'}`;
      objects.set(key, bytes);
      return { key, size_bytes: bytes.byteLength, sha256 };
    },
    get: async (key) => objects.get(key) ?? null,
    url: async (key, expiresInSeconds, downloadName) =>
      `https://documents.test/${key}?expires=${expiresInSeconds}${downloadName ? `&name=${downloadName}` : ''}`,
  };
}

export function fakeDdsStore(over: Partial<DdsStore> = {}): DdsStore {
  return {
    create: () => unexpected('dds.create'),
    get: () => unexpected('dds.get'),
    markSubmitted: () => unexpected('dds.markSubmitted'),
    markAvailable: () => unexpected('dds.markAvailable'),
    markRejected: () => unexpected('dds.markRejected'),
    markAmended: () => unexpected('dds.markAmended'),
    markWithdrawn: () => unexpected('dds.markWithdrawn'),
    markRegistryStatus: () => unexpected('dds.markRegistryStatus'),
    // The per-batch record of an AVAILABLE statement: every filing that reaches AVAILABLE does it.
    recordOnBatch: async () => true,
    recordWithdrawalOnBatch: () => unexpected('dds.recordWithdrawalOnBatch'),
    ...over,
  };
}

export function fakeWebhookReceiptStore(over: Partial<WebhookReceiptStore> = {}): WebhookReceiptStore {
  return {
    hasWebhook: () => unexpected('receipts.hasWebhook'),
    claimWebhook: () => unexpected('receipts.claimWebhook'),
    ...over,
  };
}

// ------------------------------------------------------------------ workflow, queues, notifications

export function fakePayoutWorkflow(over: Partial<PayoutWorkflow> = {}): PayoutWorkflow {
  return {
    start: () => unexpected('workflow.start'),
    resume: () => unexpected('workflow.resume'),
    fail: () => unexpected('workflow.fail'),
    ...over,
  };
}

/** A work queue; `name` is the deps key it is handed in as (e.g. `payoutQueue`), for the error message. */
export function fakeWorkQueue<T>(name: string, over: Partial<WorkQueue<T>> = {}): WorkQueue<T> {
  return {
    send: () => unexpected(`${name}.send`),
    ...over,
  };
}

export function fakeNotifier(over: Partial<Notifier> = {}): Notifier {
  return {
    publish: () => unexpected('notifier.publish'),
    sendSms: () => unexpected('notifier.sendSms'),
    ...over,
  };
}

// ------------------------------------------------------------------ outside systems

export function fakePayoutProvider(over: Partial<PayoutProvider> = {}): PayoutProvider {
  return {
    quote: () => unexpected('provider.quote'),
    createOrder: () => unexpected('provider.createOrder'),
    getOrder: () => unexpected('provider.getOrder'),
    findOrderByReference: () => unexpected('provider.findOrderByReference'),
    // A provider that does not disclose the holder's name: the name check lets the order go on.
    lookupAccountHolder: async () => ({ found: true, name: null }),
    ...over,
  };
}

export function fakeLedger(over: Partial<Ledger> = {}): Ledger {
  return {
    mintBatchTokenKept: () => unexpected('ledger.mintBatchTokenKept'),
    mintBatchKept: () => unexpected('ledger.mintBatchKept'),
    recordStagesKept: () => unexpected('ledger.recordStagesKept'),
    estimateBatchGas: () => unexpected('ledger.estimateBatchGas'),
    batchOutcomes: () => unexpected('ledger.batchOutcomes'),
    batchCallError: () => unexpected('ledger.batchCallError'),
    simulateBatch: () => unexpected('ledger.simulateBatch'),
    batchedCallsDeployed: () => unexpected('ledger.batchedCallsDeployed'),
    recordStageKept: () => unexpected('ledger.recordStageKept'),
    anchorAuditRootKept: () => unexpected('ledger.anchorAuditRootKept'),
    rebroadcast: () => unexpected('ledger.rebroadcast'),
    waitForReceipt: () => unexpected('ledger.waitForReceipt'),
    signerNonces: () => unexpected('ledger.signerNonces'),
    blockNumber: () => unexpected('ledger.blockNumber'),
    isKnown: () => unexpected('ledger.isKnown'),
    replaceKept: () => unexpected('ledger.replaceKept'),
    ...over,
  };
}

/**
 * Evidence keeping that accepts every CAR and pin job (docs/api/evidence.md#evidence-on-ipfs), remembering them: `cars`
 * by root CID, `jobs` in order.
 */
export function fakeEvidenceKeeping(): {
  archive: Pick<EvidenceArchive, 'putCar'>;
  pinQueue: WorkQueue<EvidencePinMessage>;
  cars: Map<string, Uint8Array>;
  jobs: EvidencePinMessage[];
} {
  const cars = new Map<string, Uint8Array>();
  const jobs: EvidencePinMessage[] = [];
  return {
    cars,
    jobs,
    archive: { putCar: async (root, car) => void cars.set(root, car) },
    pinQueue: { send: async (msg) => void jobs.push(msg) },
  };
}

export function fakeForestCheck(over: Partial<ForestCheck> = {}): ForestCheck {
  return {
    check: () => unexpected('forestCheck.check'),
    ...over,
  };
}

export function fakeNationalFarmerRegistry(over: Partial<NationalFarmerRegistry> = {}): NationalFarmerRegistry {
  return {
    lookup: () => unexpected('national.lookup'),
    ...over,
  };
}

export function fakeDdsRegistry(over: Partial<DdsRegistry> = {}): DdsRegistry {
  return {
    submit: () => unexpected('ddsRegistry.submit'),
    status: () => unexpected('ddsRegistry.status'),
    amend: () => unexpected('ddsRegistry.amend'),
    withdraw: () => unexpected('ddsRegistry.withdraw'),
    ...over,
  };
}

export function fakeTraceLogReader(over: Partial<TraceLogReader> = {}): TraceLogReader {
  return {
    stageRecordedAt: () => unexpected('traceLog.stageRecordedAt'),
    ...over,
  };
}

// ------------------------------------------------------------------ records

const CREATED_AT = '2026-11-01T08:00:00.000Z';
const DEFAULT_BATCH_ID = 'BATCH-2026-000001';

/** Year, number and token id of a batch id (the defaults' when it does not parse). */
function batchNumbers(batchId: string): { year: number; n: number; tokenId: string } {
  const ref = parseBatchId(batchId) ?? { year: 2026, n: 1 };
  return { ...ref, tokenId: tokenIdForBatch(ref.year, ref.n).toString() };
}

/** An ACTIVE cooperative with prices for every grade and an export premium of 400 UGX/kg. */
export function aCooperative(over: Partial<Cooperative> = {}): Cooperative {
  return {
    cooperative_id: 'COOP-1',
    name: 'Bugisu Farmers',
    district: 'Mbale',
    licence_status: 'ACTIVE',
    licence_expires_at: '2099-12-31',
    manager: { name: 'Grace Nambozo', email: 'grace@example.org', phone: '+256772123456' },
    prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
    export_premium_ugx_per_kg: 400,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

/** A farmer of COOP-1 with a phone, verified by the national registry, farm forest-checked CLEAR. */
export function aFarmer(over: Partial<Farmer> = {}): Farmer {
  return {
    farmer_id: 'F-1',
    full_name: 'Joseph Wamala',
    cooperative_id: 'COOP-1',
    phone: '+256772000123',
    district: 'Mbale',
    farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1.5 },
    gfw_status: 'CLEAR',
    national_registry_status: 'VERIFIED',
    gfw_checked_at: '2026-01-02T00:00:00.000Z',
    gfw_dataset: { name: 'umd_glad_landsat_alerts', version: 'v20260101' },
    registered_at: '2026-01-02T00:00:00.000Z',
    registered_by: 'coop-user-COOP-1',
    ...over,
  };
}

/**
 * A batch of F-1 at COOP-1 whose mint is confirmed: stage DELIVERED with its history entry, one
 * audit entry, net coffee payment round(240.75 kg × 9,800) = 2,359,350 UGX, no payout yet.
 */
export function aBatch(over: Partial<Batch> = {}): Batch {
  const batchId = over.batch_id ?? DEFAULT_BATCH_ID;
  const { year, n, tokenId } = batchNumbers(batchId);
  const mintTx = `0x${'ab'.repeat(32)}`;
  return {
    batch_id: batchId,
    batch_year: year,
    batch_number: n,
    token_id: tokenId,
    farmer_id: 'F-1',
    cooperative_id: 'COOP-1',
    weight_kg: 240.75,
    grade: 'screen18',
    moisture_pct: 11.5,
    collection_point_gps: { lat: 1.08, lng: 34.17 },
    collector_agent_id: 'agent-1',
    stage: 'DELIVERED',
    mint_status: 'CONFIRMED',
    chain_tx_hash: mintTx,
    audit_seq: 1,
    audit_head_hash: 'cd'.repeat(32),
    stage_history: [
      {
        stage: 'DELIVERED',
        at: CREATED_AT,
        actor: 'agent-1',
        chain_tx_hash: mintTx,
        audit_log_sequence_number: '1',
        evidence_ipfs_cid: null,
      },
    ],
    payment_status: 'INITIATED',
    payment_amount_ugx: 2_359_350,
    payout_seq: 0,
    submitted_by: 'agent-1',
    created_at: CREATED_AT,
    updated_at: CREATED_AT,
    ...over,
  };
}

/**
 * The batch's first payout (NET_COFFEE_PAYMENT), PENDING at attempt 1: 10 USDC at 3,700.25 UGX/USD
 * = 37,002 UGX estimated.
 */
export function aPayout(over: Partial<Payout> = {}): Payout {
  const batchId = over.batch_id ?? DEFAULT_BATCH_ID;
  const { year, n } = batchNumbers(batchId);
  return {
    payment_id: formatPayoutId(year, n, 1),
    payment_type: 'FARMER_PAYOUT',
    batch_id: batchId,
    farmer_id: 'F-1',
    cooperative_id: 'COOP-1',
    reason: 'NET_COFFEE_PAYMENT',
    status: 'PENDING',
    amount_usd_micro: 10_000_000,
    amount_ugx: 37_002,
    estimated_ugx: 37_002,
    exchange_rate: '3700.25',
    quote_id: 'q1',
    phone: '+256772000123',
    recipient_name: 'Joseph Wamala',
    attempt: 1,
    retry_count: 0,
    created_at: '2026-11-22T09:00:00.000Z',
    updated_at: '2026-11-22T09:00:00.000Z',
    created_by: 'system',
    ...over,
  };
}

/** The batch's BatchToken mint, committed and not yet signed (PENDING), audit entry 1. */
export function aLedgerTx(over: Partial<BatchLedgerTx> = {}): BatchLedgerTx {
  const batchId = over.batch_id ?? DEFAULT_BATCH_ID;
  const seq = over.audit_sequence_number ?? 1;
  return {
    ledger_tx_id: `${batchId}-${seq}`,
    kind: 'MINT',
    batch_id: batchId,
    token_id: batchNumbers(batchId).tokenId,
    stage: 'DELIVERED',
    audit_hash: 'cd'.repeat(32),
    audit_sequence_number: seq,
    status: 'PENDING',
    created_at: CREATED_AT,
    ...over,
  };
}
