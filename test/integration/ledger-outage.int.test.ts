import { signDevToken } from '../../infra/local/dev-keys';
import { startStackProcess, type StackProcess } from '../support/stack-process';

/**
 * Consistency under failure (issue "custody trail", item 5): with the local chain stopped mid-run
 * (the hardhat process paused), a stage update is committed to DynamoDB — stage, audit entry and
 * the intent to write the trace log — and answered 202 with a job; once the chain is back, the
 * single ledger writer lands the transaction and the job completes. This file runs its own stack,
 * since pausing the chain would disturb the other integration tests.
 */

let stack: StackProcess;
let url: string;
const call = async (method: string, path: string, tok: string, body?: unknown) => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  stack = await startStackProcess({ STAGE_LEDGER_WAIT_MS: '2000', RECONCILE_AFTER_SECONDS: '2' });
  url = stack.info.url;
}, 90_000);

afterAll(async () => {
  try {
    process.kill(stack.info.pids.hardhat!, 'SIGCONT');
  } catch {
    // not paused
  }
  await stack?.stop();
});

it('answers 202 with a job while the chain is down, and the job completes once the trace-log write lands', async () => {
  const dataDir = stack.info.dataDir;
  const admin = await signDevToken({ role: 'ADMIN' }, 3600, dataDir);
  const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: 'OUTAGE' }, 3600, dataDir);
  await call('POST', '/cooperatives', admin, {
    cooperative_id: 'OUTAGE',
    name: 'Outage Cooperative',
    district: 'Mbale',
    licence_status: 'ACTIVE',
    licence_expires_at: '2030-01-01',
    manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
    prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
    export_premium_ugx_per_kg: 0,
  });
  await call('POST', '/farmers/register', coop, {
    farmer_id: 'OUT-F',
    full_name: 'Out Farmer',
    cooperative_id: 'OUTAGE',
    district: 'Mbale',
    farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
  });
  const submit = await call('POST', '/batch/submit', coop, {
    farmer_id: 'OUT-F',
    cooperative_id: 'OUTAGE',
    weight_kg: 80,
    grade: 'FAQ',
    moisture_pct: 12,
    collection_point_gps: { lat: 1.08, lng: 34.17 },
    collector_agent_id: 'A1',
  });
  expect(submit.status).toBe(201);
  const batchId = submit.body.data.batch_id;

  // Act: the chain stops answering
  process.kill(stack.info.pids.hardhat!, 'SIGSTOP');
  const res = await call('PATCH', `/batch/${batchId}/stage`, coop, {
    cooperative_id: 'OUTAGE',
    new_stage: 'GRADED',
    evidence: { grade: 'FAQ', moisture_pct: 12.1 },
  });

  // Assess: accepted, committed, not yet on chain
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({
    job_id: expect.stringMatching(/^JOB-/),
    status: 'PENDING',
    new_stage: 'GRADED',
    previous_stage: 'DELIVERED',
    evidence_ipfs_cid: expect.stringMatching(/^bafy/),
    chain_tx_hash: null,
  });
  const during = await call('GET', `/batch/${batchId}`, coop);
  expect(during.body.stage).toBe('GRADED');
  expect(during.body.stage_history[1]).toMatchObject({ stage: 'GRADED', chain_tx_hash: null });
  const second = await call('PATCH', `/batch/${batchId}/stage`, coop, {
    cooperative_id: 'OUTAGE',
    new_stage: 'GRADED',
    evidence: { grade: 'FAQ', moisture_pct: 12.1 },
  });
  expect([second.status, second.body.error.code]).toEqual([422, 'STAGE_OUT_OF_ORDER']);

  // The chain comes back: the job completes with the transaction
  process.kill(stack.info.pids.hardhat!, 'SIGCONT');
  const deadline = Date.now() + 60_000;
  let job = await call('GET', `/jobs/${res.body.job_id}`, coop);
  while (job.body.status !== 'COMPLETE' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    job = await call('GET', `/jobs/${res.body.job_id}`, coop);
  }
  expect(job.body).toMatchObject({ status: 'COMPLETE', batch_id: batchId, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  const after = await call('GET', `/batch/${batchId}`, coop);
  expect(after.body.stage_history[1].chain_tx_hash).toBe(job.body.tx_hash);
  // Verified once the periodic anchor (every 3 s here) has committed the entries after the mint.
  let audit = await call('GET', `/batch/${batchId}/audit`, coop);
  for (const until = Date.now() + 30_000; audit.body.verified !== true && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 250));
    audit = await call('GET', `/batch/${batchId}/audit`, coop);
  }
  expect(audit.body.checks.filter((c: { ok: boolean }) => !c.ok)).toEqual([]);
  expect(audit.body.verified).toBe(true);
}, 120_000);
