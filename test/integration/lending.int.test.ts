import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, http, parseAbi } from 'viem';
import { LOCAL_TABLE_NAME, localTableClient } from '../../infra/local/dynamodb-local';
import { vaultRef } from '../../shared/adapters/ledger/vault-ledger';
import { api, stackDataDir, token, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Loans on the local stack (docs/api/lending.md#mfi-deposits): an MFI deposit gives the vault liquidity; a
 * loan on a minted batch locks its BatchToken in the vault on chain, and only then is the
 * LOAN_DISBURSEMENT paid through the payout sandbox; the loan becomes ACTIVE when it settles.
 * 20 concurrent loan requests on one batch create exactly one loan and lock the token once.
 */

const stack = () =>
  JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as {
    endpoints: { ledger: string; lending_vault: `0x${string}`; batch_token: `0x${string}` };
  };
const vaultAbi = parseAbi(['function loanOf(bytes32 loanRef) view returns (uint8 status, uint256 tokenId, uint256 principal)']);
const erc721Abi = parseAbi(['function ownerOf(uint256 tokenId) view returns (address)']);

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
let farmer: string;

/** A submitted batch whose BatchToken is minted (201 waits for the receipt; 202 is polled). */
async function mintedBatch(overrides: Record<string, unknown> = {}): Promise<{ batch_id: string; token_id: string }> {
  const res = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, overrides) });
  if (res.status !== 201 && res.status !== 202) throw new Error(`submit failed: ${res.status} ${JSON.stringify(res.body)}`);
  const batchId: string = res.body.data?.batch_id ?? res.body.batch_id;
  const batch = await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.status === 200,
    20_000,
  );
  return { batch_id: batchId, token_id: String(batch.body.token_id) };
}

beforeAll(async () => {
  ctx = await setUpCooperative();
  farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000789');
  // Liquidity: an MFI deposits 5,000 USD through the on-ramp sandbox into the vault.
  const mfi = await token({ role: 'MFI', mfi_id: uid('MFI'), sub: 'mfi-lending-test' });
  const dep = await api('POST', '/mfi/deposits', { token: mfi, body: { source_currency: 'USD', source_amount: 5_000 } });
  if (dep.status !== 202) throw new Error(`deposit failed: ${dep.status} ${JSON.stringify(dep.body)}`);
  const done = await waitFor(
    () => api('GET', `/payments/${dep.body.payment_id}`, { token: mfi }),
    (r) => r.body.status === 'COMPLETED',
    30_000,
    250,
  );
  if (done.body.status !== 'COMPLETED') throw new Error(`deposit not completed: ${JSON.stringify(done.body)}`);
}, 90_000);

describe('a loan on a BatchToken', () => {
  it('locks the token in the vault on chain, then pays the farmer a LOAN_DISBURSEMENT; ACTIVE once it settles', async () => {
    const batch = await mintedBatch();
    const res = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: batch.batch_id, amount_usdc: 300 } });
    if (res.status !== 202) throw new Error(`POST /loans: ${res.status} ${JSON.stringify(res.body)}`);
    expect(res.body).toMatchObject({
      status: 'PENDING',
      batch_id: batch.batch_id,
      principal_usdc: 300,
      collateral_value_usdc: 747.1,
      ltv: 0.4016,
      apr: 0.12,
      disbursement_payment_id: res.body.loan_id.replace('LOAN-', 'DISB-'),
    });
    expect(res.headers.get('location')).toBe(`/loans/${res.body.loan_id}`);

    const active = await waitFor(
      () => api('GET', `/loans/${res.body.loan_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'ACTIVE',
      40_000,
      250,
    );
    expect(active.body).toMatchObject({
      status: 'ACTIVE',
      lock_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      disbursed_at: expect.any(String),
    });

    const disb = await api('GET', `/payments/${res.body.disbursement_payment_id}`, { token: ctx.coop });
    expect(disb.body).toMatchObject({
      payment_type: 'LOAN_DISBURSEMENT',
      status: 'COMPLETED',
      loan_id: res.body.loan_id,
      amount_usdc: 300,
      farmer_id: farmer,
      batch_id: batch.batch_id,
    });

    // On chain: the vault holds the token and records the loan.
    const s = stack();
    const chain = createPublicClient({ transport: http(s.endpoints.ledger) });
    expect(
      (
        await chain.readContract({
          address: s.endpoints.batch_token,
          abi: erc721Abi,
          functionName: 'ownerOf',
          args: [BigInt(batch.token_id)],
        })
      ).toLowerCase(),
    ).toBe(s.endpoints.lending_vault.toLowerCase());
    const [status, tokenId, principal] = await chain.readContract({
      address: s.endpoints.lending_vault,
      abi: vaultAbi,
      functionName: 'loanOf',
      args: [vaultRef(res.body.loan_id)],
    });
    expect([status, tokenId, principal]).toEqual([1, BigInt(batch.token_id), 300_000_000n]);

    expect((await api('GET', `/batch/${batch.batch_id}/loan`, { token: ctx.coop })).body.loan_id).toBe(res.body.loan_id);
    const audit = await api('GET', `/batch/${batch.batch_id}/audit`, { token: ctx.coop });
    expect(audit.body.entries.map((e: { type: string }) => e.type)).toContain('LOAN_REQUESTED');

    // The lock's vault write, confirmed, has left the open vault writes' index (docs/ledger.md#vault-writes-ahead-of-the-backlog).
    const doc = localTableClient((s as ReturnType<typeof stack> & { endpoints: { dynamodb: string } }).endpoints.dynamodb);
    const lock = await doc.send(
      new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: { PK: `LEDGER_TX#${res.body.loan_id}-lock`, SK: 'META' }, ConsistentRead: true }),
    );
    expect(lock.Item).toMatchObject({ kind: 'VAULT', status: 'CONFIRMED' });
    expect(lock.Item!.GSI1PK).toBeUndefined();
  }, 60_000);

  it('20 concurrent loan requests on one batch: one 202, nineteen 409 BATCH_HAS_ACTIVE_LOAN, the token locked once', async () => {
    const batch = await mintedBatch();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', '/loans', { token: ctx.coop, body: { batch_id: batch.batch_id, amount_usdc: 100 } })),
    );
    const tally: Record<string, number> = {};
    for (const r of results)
      tally[`${r.status}${r.status >= 400 ? ` ${r.body.error?.code}` : ''}`] =
        (tally[`${r.status}${r.status >= 400 ? ` ${r.body.error?.code}` : ''}`] ?? 0) + 1;
    expect(tally).toEqual({ 202: 1, '409 BATCH_HAS_ACTIVE_LOAN': 19 });
    const loanId: string = results.find((r) => r.status === 202)!.body.loan_id;
    const locked = await waitFor(
      () => api('GET', `/loans/${loanId}`, { token: ctx.coop }),
      (r) => !!r.body.lock_tx_hash,
      30_000,
      250,
    );
    expect(locked.body.lock_tx_hash).toMatch(/^0x/);
    // The lock is recorded first; the disbursement is created right after it (shared/use-cases/loans.ts), so wait for it.
    const disbursements = async () =>
      (await api('GET', `/payments?batch_id=${batch.batch_id}`, { token: ctx.coop })).body.payments.filter(
        (p: { payment_type: string }) => p.payment_type === 'LOAN_DISBURSEMENT',
      );
    expect(await waitFor(disbursements, (d) => d.length > 0, 30_000, 250)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await disbursements()).toHaveLength(1); // and no second one follows
  }, 60_000);

  it('each loan error code through the API: 422 INSUFFICIENT_COLLATERAL, 404 LOAN_NOT_FOUND, 503 STALE_PRICE_FEED, 400 for a LOAN_DISBURSEMENT payout', async () => {
    const batch = await mintedBatch({ weight_kg: 10 });
    const small = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: batch.batch_id, amount_usdc: 50 } });
    expect(small.status).toBe(422);
    expect(small.body.error).toMatchObject({
      code: 'INSUFFICIENT_COLLATERAL',
      details: { collateral_value_usdc: 62, max_loan_usdc: 37.2 },
    });
    expect((await api('GET', `/batch/${batch.batch_id}/loan`, { token: ctx.coop })).body.error.code).toBe('LOAN_NOT_FOUND');
    expect((await api('GET', '/loans/LOAN-2026-999999', { token: ctx.coop })).status).toBe(404);
    expect((await api('GET', '/loans/not-a-loan', { token: ctx.coop })).status).toBe(400);

    const payout = await api('POST', '/payments/farmer-payout', {
      token: ctx.coop,
      body: { farmer_id: farmer, batch_id: batch.batch_id, amount_usdc: 10, reason: 'LOAN_DISBURSEMENT', cooperative_id: ctx.id },
    });
    expect(payout.status).toBe(400);
    expect(payout.body.error.message).toContain('POST /loans');

    const file = process.env.PRICE_FEED_FILE ?? join(stackDataDir(), 'price-feed.json');
    const original = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, JSON.stringify({ ...JSON.parse(original), updated_at: new Date(Date.now() - 61 * 60_000).toISOString() }));
      const stale = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: batch.batch_id, amount_usdc: 50 } });
      expect(stale.status).toBe(503);
      expect(stale.body.error.code).toBe('STALE_PRICE_FEED');
    } finally {
      writeFileSync(file, original);
    }
  }, 60_000);
});

describe('a loan unpaid 90 days after its due date (scheduled write-off through the single ledger writer)', () => {
  const DAY = 86_400_000;
  const convertAbi = parseAbi(['function convertToAssets(uint256 shares) view returns (uint256)']);

  it('is due LOAN_TERM_DAYS (180) after creation; 30+ days past due it counts in par30_usdc; 90 days past due it is DEFAULTED with loss_usdc, defaults_usdc rises by its principal and the share price drops (API and chain)', async () => {
    const admin = ctx.admin;
    const batch = await mintedBatch();
    const res = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: batch.batch_id, amount_usdc: 300 } });
    if (res.status !== 202) throw new Error(`POST /loans: ${res.status} ${JSON.stringify(res.body)}`);
    const loanId: string = res.body.loan_id;
    expect(Date.parse(res.body.due_at) - Date.parse(res.body.created_at)).toBe(180 * DAY);
    expect(res.body).toMatchObject({ defaulted_at: null, loss_usdc: null, write_off_tx_hash: null });

    // Stored ACTIVE by the payout reconciler once the disbursement settled: then it is in the due-date index.
    const s = stack() as ReturnType<typeof stack> & { endpoints: { dynamodb: string } };
    const doc = localTableClient(s.endpoints.dynamodb);
    const key = { PK: `LOAN#${loanId}`, SK: 'META' };
    const stored = await waitFor(
      () => doc.send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: key, ConsistentRead: true })),
      (r) => r.Item?.status === 'ACTIVE' && r.Item?.GSI2PK === 'ACTIVE_LOAN_DUE',
      60_000,
      250,
    );
    expect(stored.Item!.GSI2SK).toBe(`${res.body.due_at}#${loanId}`);

    // Time travel: the loan's due date moved into the past (as the clock would after 180 + n days).
    const pastDue = async (days: number) => {
      const dueAt = new Date(Date.now() - days * DAY).toISOString();
      await doc.send(
        new UpdateCommand({
          TableName: LOCAL_TABLE_NAME,
          Key: key,
          UpdateExpression: 'SET due_at = :d, GSI2SK = :sk',
          ConditionExpression: '#s = :active',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':d': dueAt, ':sk': `${dueAt}#${loanId}`, ':active': 'ACTIVE' },
        }),
      );
    };
    const chain = createPublicClient({ transport: http(s.endpoints.ledger) });
    const pricePerShare = () =>
      chain.readContract({ address: s.endpoints.lending_vault, abi: convertAbi, functionName: 'convertToAssets', args: [10n ** 12n] });

    await pastDue(45);
    const atRisk = await api('GET', '/mfi/vault', { token: admin });
    expect(atRisk.status).toBe(200);
    expect(atRisk.body.par30_usdc).toBe(300);
    expect((await api('GET', `/loans/${loanId}`, { token: ctx.coop })).body.status).toBe('ACTIVE');
    const chainPriceBefore = await pricePerShare();

    await pastDue(91);
    const defaulted = await waitFor(
      () => api('GET', `/loans/${loanId}`, { token: ctx.coop }),
      (r) => r.body.status === 'DEFAULTED',
      60_000,
      250,
    );
    expect(defaulted.body).toMatchObject({
      status: 'DEFAULTED',
      loss_usdc: 300,
      write_off_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      defaulted_at: expect.any(String),
    });

    const after = await api('GET', '/mfi/vault', { token: admin });
    expect(after.body.defaults_usdc).toBeCloseTo(atRisk.body.defaults_usdc + 300, 6);
    expect(after.body.par30_usdc).toBe(0);
    expect(after.body.share_price_usdc).toBeLessThan(atRisk.body.share_price_usdc);
    expect(after.body.loans_outstanding_usdc).toBeLessThanOrEqual(atRisk.body.loans_outstanding_usdc - 300 + 1e-6);

    // On chain: DEFAULTED (4), the token still in the vault, one share worth less.
    const [status, , principal] = await chain.readContract({
      address: s.endpoints.lending_vault,
      abi: vaultAbi,
      functionName: 'loanOf',
      args: [vaultRef(loanId)],
    });
    expect([status, principal]).toEqual([4, 300_000_000n]);
    expect(
      (
        await chain.readContract({
          address: s.endpoints.batch_token,
          abi: erc721Abi,
          functionName: 'ownerOf',
          args: [BigInt(batch.token_id)],
        })
      ).toLowerCase(),
    ).toBe(s.endpoints.lending_vault.toLowerCase());
    expect(await pricePerShare()).toBeLessThan(chainPriceBefore);

    // The trail has it; the batch keeps its (written-off) loan and takes no new one.
    const audit = await api('GET', `/batch/${batch.batch_id}/audit`, { token: ctx.coop });
    expect(audit.body.entries.map((e: { type: string }) => e.type)).toContain('LOAN_DEFAULTED');
    expect((await api('GET', `/batch/${batch.batch_id}/loan`, { token: ctx.coop })).body).toMatchObject({
      loan_id: loanId,
      status: 'DEFAULTED',
    });
    expect((await api('POST', '/loans', { token: ctx.coop, body: { batch_id: batch.batch_id, amount_usdc: 50 } })).body.error?.code).toBe(
      'BATCH_HAS_ACTIVE_LOAN',
    );
  }, 120_000);
});
