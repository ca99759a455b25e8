import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createPublicClient, http } from 'viem';
import { runVerify } from '../../infra/tools/verify-cli';
import { AuditAnchorRepository } from '../../shared/adapters/dynamodb/anchor-repo';
import { auditAnchorAbi } from '../../shared/adapters/ledger/abi';
import { buildAuditEntry } from '../../shared/domain/audit';
import type { AuditEntry } from '../../shared/domain/records';
import { api, token, waitFor, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';
import { LOCAL_TABLE_NAME, localTableClient, localTableEnv } from '../../infra/local/dynamodb-local';

/**
 * Periodic anchoring on the local stack (docs/api/anchoring.md#anchoring-of-the-audit-log; issue 13 "Done when": every entry anchored
 * after the interval, a rewritten entry caught by `verify` and by `/audit`). The test stack runs
 * with LOCAL_TIME_SCALE=0.01, so the audit-anchorer runs every 3 s.
 */
describe('periodic anchoring of audit logs', () => {
  const stack = () => localStack();
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  const batches: string[] = [];
  let doc: DynamoDBDocumentClient;

  beforeAll(async () => {
    doc = localTableClient(stack().endpoints.dynamodb!);
    ctx = await setUpCooperative();
    for (const phone of ['+256772000611', '+256772000612']) {
      const farmer = await registerFarmer(ctx.id, ctx.coop, phone);
      const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
      expect(submit.status).toBe(201);
      batches.push(submit.body.data.batch_id);
    }
    // Each batch's payout completes: its PAYOUT_* and PAYMENT_* entries are anchored only by the periodic anchor.
    for (const b of batches) {
      const paid = await waitFor(
        () => api('GET', `/batch/${b}`, { token: ctx.coop }),
        (r) => r.body.payment_status === 'PAYMENT_CONFIRMED',
        30_000,
      );
      expect(paid.body.payment_status).toBe('PAYMENT_CONFIRMED');
    }
  });
  afterAll(() => doc?.destroy());

  const audit = (b: string) => api('GET', `/batch/${b}/audit`, { token: ctx.coop });

  it('anchors every entry after the interval: mint by its transaction, payout entries by one shared Merkle root on chain', async () => {
    const results = await Promise.all(
      batches.map((b) =>
        waitFor(
          () => audit(b),
          (r) => r.body.verified === true,
          45_000,
          500,
        ),
      ),
    );
    for (const r of results) {
      expect(r.body.checks.filter((c: { ok: boolean }) => !c.ok)).toEqual([]);
      expect(r.body.verified).toBe(true);
      const entries = r.body.entries as Array<AuditEntry & { anchor: Record<string, unknown> | null }>;
      expect(entries.length).toBeGreaterThanOrEqual(3);
      expect(entries.every((e) => e.anchor !== null)).toBe(true);
      expect(entries[0]!.anchor).toEqual({ tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), block_number: expect.any(Number) });
      for (const e of entries.slice(1)) {
        expect(e.anchor).toMatchObject({
          root: expect.stringMatching(/^0x[0-9a-f]{64}$/),
          proof: expect.any(Array),
          head_sequence_number: expect.any(Number),
          tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        });
        expect(e.anchor!.head_sequence_number as number).toBeGreaterThanOrEqual(e.sequence_number);
      }
    }
    // The root each batch's newest entry is proven under is on chain, at the block the API names.
    const client = createPublicClient({ transport: http(stack().endpoints.ledger) });
    for (const r of results) {
      const last = r.body.entries[r.body.entries.length - 1].anchor;
      const block = await client.readContract({
        address: stack().endpoints.audit_anchor as `0x${string}`,
        abi: auditAnchorAbi,
        functionName: 'anchoredAtBlock',
        args: [last.root],
      });
      expect(Number(block)).toBe(last.block_number);
    }
    // One anchor transaction per interval, whatever the number of batches: submitted together, both
    // batches' heads were most likely committed by one root; at least, no batch's entries needed more roots than anchors ran.
    const roots = new Set(results.flatMap((r) => r.body.entries.slice(1).map((e: { anchor: { root: string } }) => e.anchor.root)));
    expect(roots.size).toBeGreaterThanOrEqual(1);
  });

  it('a payout entry rewritten in the database (hashes recomputed) is caught by GET /audit and by npm run verify', async () => {
    const b = batches[0]!;
    const before = await waitFor(
      () => audit(b),
      (r) => r.body.verified === true,
      45_000,
      500,
    );
    const entries = before.body.entries as AuditEntry[];
    const target = entries.findIndex((e) => e.type.startsWith('PAY'));
    expect(target).toBeGreaterThan(0);

    // An insider rewrites the payout entry and recomputes every hash after it, and the batch's head.
    let prev = entries[target - 1]!.hash;
    const forged: AuditEntry[] = [];
    for (const e of entries.slice(target)) {
      const payload = e.sequence_number === entries[target]!.sequence_number ? { ...e.payload, amount_ugx: 1 } : e.payload;
      const next = buildAuditEntry({ batchId: b, seq: e.sequence_number, type: e.type, at: e.at, actor: e.actor, payload, prevHash: prev });
      forged.push(next);
      prev = next.hash;
    }
    for (const f of forged) {
      await doc.send(
        new PutCommand({
          TableName: LOCAL_TABLE_NAME,
          Item: { PK: `AUDIT#${b}`, SK: `SEQ#${String(f.sequence_number).padStart(8, '0')}`, entity: 'AUDIT', ...f },
        }),
      );
    }
    await doc.send(
      new UpdateCommand({
        TableName: LOCAL_TABLE_NAME,
        Key: { PK: `BATCH#${b}`, SK: 'META' },
        UpdateExpression: 'SET audit_head_hash = :h',
        ExpressionAttributeValues: { ':h': prev },
      }),
    );
    const stored = await doc.send(
      new QueryCommand({
        TableName: LOCAL_TABLE_NAME,
        KeyConditionExpression: 'PK = :p',
        ExpressionAttributeValues: { ':p': `AUDIT#${b}` },
      }),
    );
    expect(stored.Items!.find((i) => i.sequence_number === entries[target]!.sequence_number)!.payload.amount_ugx).toBe(1);

    // The hash chain alone still holds; the anchor does not.
    const after = await audit(b);
    expect(after.body.verified).toBe(false);
    const failed = after.body.checks.filter((c: { ok: boolean }) => !c.ok);
    expect(failed.every((c: { check: string }) => c.check === 'anchor')).toBe(true);
    expect(failed.map((c: { message_id: string }) => c.message_id)).toContain(entries[target]!.message_id);
    expect(failed.find((c: { message_id: string }) => c.message_id === entries[target]!.message_id).detail).toMatch(
      /rewritten after it was anchored/,
    );

    const s = stack();
    const admin = await token({ role: 'ADMIN', sub: 'auditor' });
    const lines: string[] = [];
    const code = await runVerify(
      [
        b,
        '--api',
        s.url,
        '--token',
        admin,
        '--rpc',
        s.endpoints.ledger!,
        '--chain-id',
        '31337',
        '--batch-token',
        s.endpoints.batch_token!,
        '--trace-log',
        s.endpoints.trace_log!,
        '--audit-anchor',
        s.endpoints.audit_anchor!,
        '--ipfs-gateway',
        s.url,
      ],
      (l) => lines.push(l),
      (l) => lines.push(l),
    );
    expect(code).toBe(1);
    const text = lines.join('\n');
    expect(text).toMatch(/NOT VERIFIED/);
    expect(text).toContain(`not anchored or disagreeing: `);
    expect(text).toContain(entries[target]!.message_id);

    // The other batch, untouched, still verifies independently.
    const other: string[] = [];
    const otherCode = await runVerify(
      [
        batches[1]!,
        '--api',
        s.url,
        '--token',
        admin,
        '--rpc',
        s.endpoints.ledger!,
        '--chain-id',
        '31337',
        '--batch-token',
        s.endpoints.batch_token!,
        '--trace-log',
        s.endpoints.trace_log!,
        '--audit-anchor',
        s.endpoints.audit_anchor!,
        '--ipfs-gateway',
        s.url,
      ],
      (l) => other.push(l),
      (l) => other.push(l),
    );
    expect([otherCode, other.join('\n')]).toEqual([0, expect.stringMatching(/VERIFIED: all \d+ checks passed, every entry anchored/)]);
  });

  it('an entry written before anchoring existed (no marker) is anchored after `npm run anchor-backfill`', async () => {
    const b = batches[1]!;
    const before = await waitFor(
      () => audit(b),
      (r) => r.body.verified === true,
      45_000,
      500,
    );
    const entries = before.body.entries as AuditEntry[];
    const last = entries[entries.length - 1]!;
    // A correctly chained entry put the way the service wrote them before this release: no marker.
    const legacy = buildAuditEntry({
      batchId: b,
      seq: last.sequence_number + 1,
      type: 'PAYOUT_NOTE',
      at: new Date().toISOString(),
      actor: 'legacy',
      payload: { note: 'written before anchoring' },
      prevHash: last.hash,
    });
    await doc.send(
      new PutCommand({
        TableName: LOCAL_TABLE_NAME,
        Item: { PK: `AUDIT#${b}`, SK: `SEQ#${String(legacy.sequence_number).padStart(8, '0')}`, entity: 'AUDIT', ...legacy },
      }),
    );
    await doc.send(
      new UpdateCommand({
        TableName: LOCAL_TABLE_NAME,
        Key: { PK: `BATCH#${b}`, SK: 'META' },
        UpdateExpression: 'SET audit_seq = :s, audit_head_hash = :h',
        ExpressionAttributeValues: { ':s': legacy.sequence_number, ':h': legacy.hash },
      }),
    );
    // Two anchor intervals (3 s each here) pass without it being anchored: nothing marks it.
    await new Promise((r) => setTimeout(r, 7000));
    const pending = await audit(b);
    expect(pending.body.verified).toBe(false);
    expect(
      pending.body.checks
        .filter((c: { ok: boolean }) => !c.ok)
        .map((c: { message_id: string; detail: string }) => [c.message_id, c.detail.slice(0, 16)]),
    ).toEqual([[legacy.message_id, 'not yet anchored']]);

    Object.assign(process.env, localTableEnv(stack().endpoints.dynamodb!));
    const repo = new AuditAnchorRepository();
    const first = await repo.backfillMarkers(new Date().toISOString());
    expect(first.marked).toBeGreaterThanOrEqual(1);
    const markerKey = { PK: `UNANCHORED#${b}#${legacy.sequence_number}`, SK: 'META' };
    const marker = (await doc.send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: markerKey }))).Item;
    expect(marker).toMatchObject({ batch_ids: [b], entity: 'ANCHOR_MARKER' });
    // Idempotent: a second run leaves the head's marker as it is.
    await repo.backfillMarkers('2030-01-01T00:00:00.000Z');
    expect((await doc.send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: markerKey }))).Item?.created_at).toBe(marker!.created_at);
    const after = await waitFor(
      () => audit(b),
      (r) => r.body.verified === true,
      45_000,
      500,
    );
    expect(after.body.entries[after.body.entries.length - 1].anchor).toMatchObject({ head_sequence_number: legacy.sequence_number });
  });
});
