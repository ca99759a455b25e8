import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { EvidencePinRepository, pinJobPut } from '../../shared/adapters/dynamodb/evidence-pin-repo';
import { keys } from '../../shared/adapters/dynamodb/keys';
import { documentClient } from '../../shared/adapters/dynamodb/table';
import type { EvidencePinMessage } from '../../shared/domain/ports/evidence';
import { logger } from '../../shared/runtime/logger';
import { MAX_PIN_REQUEUES, requeueStalePins } from '../../shared/use-cases/evidence-pinning';
import { api, waitFor, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';
import { LOCAL_TABLE_NAME, localTableEnv } from '../../infra/local/dynamodb-local';
import { useTableOfItsOwn } from '../support/table-of-its-own';

/**
 * Pin jobs are written with the commit that names their CID and leave the reconciliation index
 * once pinned; a job whose queue message was lost after its commit is found by reconciliation,
 * queued again at most MAX_PIN_REQUEUES times, then given up (the stack's own DynamoDB Local; the
 * reconciliation driven with the test's own clock on a table of its own there).
 */
const repo = new EvidencePinRepository();
const FAR_FUTURE = '9999-12-31T00:00:00.000Z';
const openJobs = async () => (await repo.stalePinJobs(FAR_FUTURE, 1000)).map((j) => j.message.cid);

beforeAll(() => {
  logger.setLogLevel('SILENT');
  const stack = localStack();
  Object.assign(process.env, localTableEnv(stack.endpoints.dynamodb!), { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
});

describe('reconciliation of evidence pin jobs', () => {
  it('a stage change writes its pin job with the commit; once PINNED the job is closed', async () => {
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000931');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 90 }) });
    expect(submit.status).toBe(201);
    const batchId: string = submit.body.data.batch_id;
    const graded = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen15', moisture_pct: 11.9, cupping_score: 84 } },
    });
    if (![200, 202].includes(graded.status)) throw new Error(JSON.stringify(graded.body));
    expect([200, 202]).toContain(graded.status);
    const cid: string = graded.body.evidence_ipfs_cid;
    const pinned = await waitFor(
      async () => {
        const b = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
        return b.body.stage_history.find((h: { stage: string }) => h.stage === 'GRADED')?.evidence_pin_status as string | undefined;
      },
      (s) => s === 'PINNED',
      30_000,
    );
    expect(pinned).toBe('PINNED');
    // The job was written with the commit (history index 1: GRADED after DELIVERED) and is closed now.
    const job = await documentClient().send(
      new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: keys.pinJob(cid, { batch_id: batchId, history_index: 1 }), ConsistentRead: true }),
    );
    expect(job.Item).toMatchObject({
      entity: 'PIN_JOB',
      message: { kind: 'STAGE', cid, batch_id: batchId, stage: 'GRADED', history_index: 1 },
      requeues: 0,
    });
    expect(job.Item!.closed_at).toEqual(expect.any(String));
    expect(job.Item!.GSI2PK).toBeUndefined();
    expect(await openJobs()).not.toContain(cid);
  });

  describe('on a table of its own', () => {
    // The stack's own scheduled reconciler runs on today's clock and would re-queue this test's
    // January job too (it is stale for it), so the reconciliation this test drives with its own
    // clock uses a table of its own in the same DynamoDB Local; the stack never sees its jobs.
    useTableOfItsOwn('pin-reconciliation-test');

    it('a job lost after its commit is queued again, marked, and given up after the limit; closing removes it from the index', async () => {
      const msg: EvidencePinMessage = {
        kind: 'DDS',
        cid: `bafy-lost-${Date.now()}`,
        batch_id: 'BATCH-2026-999999',
        dds_id: `DDS-LOST-${Date.now()}`,
      };
      await documentClient().send(new TransactWriteCommand({ TransactItems: [pinJobPut(msg, '2026-01-01T00:00:00.000Z')] }));
      const sent: EvidencePinMessage[] = [];
      const pinQueue = { send: async (m: EvidencePinMessage) => void sent.push(m) };
      const mine = async () => (await repo.stalePinJobs(FAR_FUTURE, 1000)).find((j) => j.message.cid === msg.cid);

      for (let round = 1; round <= MAX_PIN_REQUEUES; round++) {
        // Each run sees the job as stale only once its last re-queue is older than the cutoff.
        const at = new Date(Date.parse('2026-06-01T00:00:00.000Z') + round * 3_600_000);
        await requeueStalePins({ statuses: repo, pinQueue, now: () => at }, 60);
        expect(sent.filter((m) => m.cid === msg.cid)).toHaveLength(round);
        expect((await mine())?.requeues).toBe(round);
        // A second run within the interval does nothing for this job.
        await requeueStalePins({ statuses: repo, pinQueue, now: () => at }, 60);
        expect(sent.filter((m) => m.cid === msg.cid)).toHaveLength(round);
      }
      const report = await requeueStalePins({ statuses: repo, pinQueue, now: () => new Date('2026-07-01T00:00:00.000Z') }, 60);
      expect(report.pinsGivenUp).toBe(1);
      expect(await mine()).toBeUndefined();
      expect(sent.filter((m) => m.cid === msg.cid)).toHaveLength(MAX_PIN_REQUEUES);

      const other: EvidencePinMessage = { ...msg, cid: `${msg.cid}-2`, dds_id: `${msg.dds_id}-2` };
      await documentClient().send(new TransactWriteCommand({ TransactItems: [pinJobPut(other, '2026-01-01T00:00:00.000Z')] }));
      expect(await openJobs()).toContain(other.cid);
      await repo.closePinJob(other, '2026-01-02T00:00:00.000Z');
      expect(await openJobs()).not.toContain(other.cid);
    });
  });
});
