import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { signDevToken } from '../../infra/local/dev-keys';
import { LOCAL_TABLE_NAME, localTableClient } from '../../infra/local/dynamodb-local';
import { LOCAL_QUEUES } from '../../infra/local/stack';
import { ledgerTxItem } from '../../shared/adapters/dynamodb/ledger-tx';
import { OPEN_LEDGER_TX } from '../../shared/adapters/dynamodb/keys';
import type { LedgerTx } from '../../shared/domain/records';
import type { StackProcess } from './stack-process';

/**
 * The ledger soak (issue "one refused ledger write must never stall the ledger"): mixed traffic on
 * a running local stack for `durationMs` — batch submissions answered 202 with a job (Prefer:
 * respond-async), stage updates (GRADED, MILLED), TOP_UP payouts that the sandbox rejects at
 * random (the stack's PAYOUT_SANDBOX_REJECT_RATE: payouts with retries) — while the audit-anchorer
 * anchors every ANCHOR_INTERVAL_S × LOCAL_TIME_SCALE, plus one poison write put straight into the
 * table and the single writer's queue (a trace-log record the writer can never send). Afterwards it
 * waits until every job is COMPLETE, then submits one more batch and times its mint. Used by the
 * bench (test/bench/ledger-soak.ts) and, shorter, by the int project (ledger-soak.int.test.ts).
 */

/** What a soak measured. */
export interface SoakFigures {
  trafficSeconds: number;
  submissions: number;
  stageUpdates: number;
  payoutRequests: number;
  jobs: number;
  /** Jobs not COMPLETE at the end (with their status). */
  jobsNotComplete: Array<{ job_id: string; status: string }>;
  /** Seconds from the end of the traffic until every job was COMPLETE. */
  drainSeconds: number;
  /** Ledger writes by outcome at the end, and anchors mined. */
  writesLanded: number;
  writesRefused: number;
  writesParked: number;
  writesOpen: number;
  anchorsLanded: number;
  /** Largest age of the oldest open ledger write seen during the soak (sampled every second), s. */
  maxOldestPendingAgeSeconds: number;
  /** The final batch: its answer and the time to its mint. */
  finalMint: { status: number; ms: number };
}

type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

/** Runs the soak on `stack` (started with LOCAL_TIME_SCALE=0.01 and a sandbox reject rate). Never throws for a stuck ledger: the figures say so. */
export async function runLedgerSoak(
  stack: StackProcess,
  opts: { durationMs: number; drainTimeoutMs: number; workers?: number; say?: (l: string) => void },
): Promise<SoakFigures> {
  const say = opts.say ?? (() => undefined);
  const url = stack.info.url;
  const admin = await signDevToken({ role: 'ADMIN', sub: 'soak-admin' }, 3600, stack.info.dataDir);
  const coopId = 'SOAK-COOP';
  const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: coopId, sub: 'soak-coop' }, 3600, stack.info.dataDir);
  const as =
    (tok: string): Call =>
    async (method, path, body, headers = {}) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
  const call = as(coop);
  await as(admin)('POST', '/cooperatives', {
    cooperative_id: coopId,
    name: 'Soak Cooperative',
    district: 'Mbale',
    licence_status: 'ACTIVE',
    licence_expires_at: '2030-01-01',
    manager: { name: 'Soak Manager', email: 'soak@example.org', phone: '+256772000001' },
    prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
    export_premium_ugx_per_kg: 400,
  });
  const farmer = await call('POST', '/farmers/register', {
    farmer_id: 'SOAK-F',
    full_name: 'Soak Farmer',
    cooperative_id: coopId,
    phone: '+256772000404',
    district: 'Mbale',
    farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
  });
  if (farmer.status >= 300) throw new Error(`farmer registration: ${farmer.status} ${JSON.stringify(farmer.body)}`);
  const batchBody = () => ({
    farmer_id: 'SOAK-F',
    cooperative_id: coopId,
    weight_kg: 60 + ((Math.random() * 80) | 0),
    grade: 'screen15',
    moisture_pct: 12,
    collection_point_gps: { lat: 1.08, lng: 34.17 },
    collector_agent_id: 'AGENT-1',
  });

  const table = localTableClient(stack.info.endpoints.dynamodb!);
  const jobs = new Set<string>();
  const delivered: string[] = [];
  const figures = { submissions: 0, stageUpdates: 0, payoutRequests: 0 };
  const jobOf = (r: { body: any }) => (r.body?.job_id ?? r.body?.data?.job_id) as string | undefined;

  // The age of the oldest open ledger write, sampled while the soak runs.
  let maxAge = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const r = await table.send(
        new QueryCommand({
          TableName: LOCAL_TABLE_NAME,
          IndexName: 'GSI2',
          KeyConditionExpression: 'GSI2PK = :pk',
          ExpressionAttributeValues: { ':pk': OPEN_LEDGER_TX },
          Limit: 1,
        }),
      );
      const oldest = r.Items?.[0];
      if (oldest) maxAge = Math.max(maxAge, (Date.now() - Date.parse(String(oldest.created_at))) / 1000);
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();

  const t0 = Date.now();
  const deadline = t0 + opts.durationMs;
  let poisoned = false;
  const worker = async (w: number) => {
    for (let i = 0; Date.now() < deadline; i++) {
      if (!poisoned && w === 0 && Date.now() - t0 > Math.min(5_000, opts.durationMs / 4)) {
        poisoned = true;
        await injectPoisonWrite(stack, table);
        say('  poison ledger write queued (a trace-log record of an unknown stage: the writer can never send it)');
      }
      const r = await call('POST', '/batch/submit', batchBody(), { prefer: 'respond-async' });
      figures.submissions++;
      const job = jobOf(r);
      if (job) jobs.add(job);
      const batchId = r.body?.data?.batch_id ?? r.body?.batch_id;
      if (r.status === 201 || r.status === 202) delivered.push(batchId);
      // Stage updates on an earlier batch whose mint has landed (a 409 while it has not is fine: tried later).
      const older = delivered[Math.floor(Math.random() * Math.max(1, delivered.length - 2))];
      if (older) {
        for (const [stage, evidence] of [
          ['GRADED', { grade: 'screen15', moisture_pct: 11.2, screen_size: 15, defect_count: 3, cupping_score: 83 }],
          ['MILLED', { mill_id: 'MILL-1', outturn_kg: 50 }],
        ] as const) {
          const s = await call(
            'PATCH',
            `/batch/${older}/stage`,
            { cooperative_id: coopId, new_stage: stage, evidence },
            { prefer: 'respond-async' },
          );
          if (s.status === 200 || s.status === 202) {
            figures.stageUpdates++;
            const sj = jobOf(s);
            if (sj) jobs.add(sj);
          }
        }
      }
      if (i % 3 === 2 && older) {
        // One TOP_UP per batch (a repeat answers 409); the sandbox rejects some orders, so payouts retry.
        await call('POST', '/payments/farmer-payout', {
          farmer_id: 'SOAK-F',
          batch_id: older,
          amount_usdc: 1.5,
          reason: 'TOP_UP',
          cooperative_id: coopId,
        });
        figures.payoutRequests++;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.workers ?? 3 }, (_, w) => worker(w)));
  const trafficSeconds = (Date.now() - t0) / 1000;
  say(
    `  traffic: ${trafficSeconds.toFixed(0)} s, ${figures.submissions} submissions, ${figures.stageUpdates} stage updates, ${figures.payoutRequests} TOP_UP payout requests, ${jobs.size} jobs`,
  );

  // Every job COMPLETE?
  const drainStart = Date.now();
  let pending = [...jobs];
  const notComplete: Array<{ job_id: string; status: string }> = [];
  while (pending.length > 0 && Date.now() - drainStart < opts.drainTimeoutMs) {
    const next: string[] = [];
    for (const id of pending) {
      const j = await call('GET', `/jobs/${id}`);
      if (j.body?.status !== 'COMPLETE') next.push(id);
    }
    pending = next;
    if (pending.length) await new Promise((res) => setTimeout(res, 500));
  }
  for (const id of pending) notComplete.push({ job_id: id, status: (await call('GET', `/jobs/${id}`)).body?.status ?? '?' });
  const drainSeconds = (Date.now() - drainStart) / 1000;

  // A new batch mints at once.
  const m0 = performance.now();
  const final = await call('POST', '/batch/submit', batchBody());
  let finalMs = performance.now() - m0;
  if (final.status === 202) {
    const id = jobOf(final)!;
    for (let k = 0; k < 200 && (await call('GET', `/jobs/${id}`)).body?.status !== 'COMPLETE'; k++)
      await new Promise((res) => setTimeout(res, 100));
    finalMs = performance.now() - m0;
  }
  sampling = false;
  await sampler;

  const writes: LedgerTx[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await table.send(
      new ScanCommand({
        TableName: LOCAL_TABLE_NAME,
        FilterExpression: 'entity = :e',
        ExpressionAttributeValues: { ':e': 'LEDGER_TX' },
        ExclusiveStartKey: start,
      }),
    );
    writes.push(...((r.Items ?? []) as LedgerTx[]));
    start = r.LastEvaluatedKey;
  } while (start);
  return {
    trafficSeconds,
    ...figures,
    jobs: jobs.size,
    jobsNotComplete: notComplete,
    drainSeconds,
    writesLanded: writes.filter((w) => w.status === 'CONFIRMED').length,
    writesRefused: writes.filter((w) => w.status === 'FAILED' && !w.parked_at).length,
    writesParked: writes.filter((w) => w.parked_at).length,
    writesOpen: writes.filter((w) => w.status === 'PENDING' || w.status === 'SENT').length,
    anchorsLanded: writes.filter((w) => w.kind === 'ANCHOR' && w.status === 'CONFIRMED').length,
    maxOldestPendingAgeSeconds: Math.round(maxAge),
    finalMint: { status: final.status, ms: Math.round(finalMs) },
  };
}

/** Puts a ledger write the writer can never send (a trace-log record of a stage the contract does not know) into the table and the writer's FIFO queue. */
async function injectPoisonWrite(stack: StackProcess, table: ReturnType<typeof localTableClient>): Promise<void> {
  const id = `POISON-${Date.now()}`;
  const poison = {
    ledger_tx_id: id,
    kind: 'TRACE_STAGE',
    batch_id: 'BATCH-2026-999999',
    token_id: '2026000000999999',
    stage: 'ROASTED',
    evidence_cid: 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi',
    audit_hash: 'ef'.repeat(32),
    audit_sequence_number: 2,
    history_index: 1,
    status: 'PENDING',
    created_at: new Date().toISOString(),
  } as unknown as LedgerTx;
  await table.send(new PutCommand({ TableName: LOCAL_TABLE_NAME, Item: ledgerTxItem(poison) }));
  const sqs = new SQSClient({
    endpoint: stack.info.endpoints.sqs_sns,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: `${LOCAL_QUEUES['ledger-write-queue'].name}.fifo` }));
  await sqs.send(
    new SendMessageCommand({
      QueueUrl,
      MessageBody: JSON.stringify({ ledger_tx_id: id }),
      MessageGroupId: 'trace-log-writer',
      MessageDeduplicationId: id,
    }),
  );
}
