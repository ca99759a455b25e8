import { GetCommand, PutCommand, QueryCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PendingNationalCheck, RegistryStore } from '../../domain/ports/registry';
import { DomainError } from '../../domain/errors';
import type { Cooperative, Farmer, Job } from '../../domain/records';
import { isConditionalCheckFailed, isTransactionCanceled } from './table';
import { documentClient, tableName } from './table';
import { FARMER_PREFIX, PENDING_NATIONAL_CHECK, keys, fromItem } from './keys';

/**
 * Cooperatives and farmers (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). Uniqueness of ids is enforced by
 * `attribute_not_exists(PK)` on the put, never by a prior read.
 */
export class RegistryRepository implements RegistryStore {
  /** Errors: COOPERATIVE_ALREADY_EXISTS (409). */
  async createCooperative(c: Cooperative): Promise<void> {
    try {
      await documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.cooperative(c.cooperative_id), entity: 'COOPERATIVE', ...c },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (err) {
      if (isConditionalCheckFailed(err))
        throw new DomainError('COOPERATIVE_ALREADY_EXISTS', `Cooperative ${c.cooperative_id} already exists.`);
      throw err;
    }
  }

  async getCooperative(id: string): Promise<Cooperative | null> {
    return readCooperative(id);
  }

  /**
   * Sets the given top-level fields of a cooperative. Errors: COOPERATIVE_NOT_FOUND (404).
   * Returns the updated record.
   */
  async updateCooperative(id: string, patch: Partial<Omit<Cooperative, 'cooperative_id' | 'created_at'>>): Promise<Cooperative> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    for (const [i, [k, v]] of Object.entries(patch).entries()) {
      if (v === undefined) continue;
      names[`#f${i}`] = k;
      values[`:v${i}`] = v;
      sets.push(`#f${i} = :v${i}`);
    }
    try {
      const r = await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.cooperative(id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ConditionExpression: 'attribute_exists(PK)',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem<Cooperative>(r.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailed(err)) throw new DomainError('COOPERATIVE_NOT_FOUND', `Cooperative ${id} is not registered.`);
      throw err;
    }
  }

  /**
   * The cooperative's off-chain holding balance: USDC of payouts that ended in MANUAL_REVIEW,
   * held for the farmers to collect at the cooperative office. Zero when nothing was ever held.
   */
  async getHolding(cooperativeId: string): Promise<{ held_usd_micro: number; payouts_held: number; updated_at: string | null }> {
    const r = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.holding(cooperativeId), ConsistentRead: true }),
    );
    return {
      held_usd_micro: Number(r.Item?.held_usd_micro ?? 0),
      payouts_held: Number(r.Item?.payouts_held ?? 0),
      updated_at: (r.Item?.updated_at as string | undefined) ?? null,
    };
  }

  /** The cooperative's farmers whose farm the forest check FLAGGED (the manual-review list). */
  async flaggedFarmers(cooperativeId: string): Promise<Farmer[]> {
    const out: Farmer[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :f)',
          FilterExpression: 'gfw_status = :flagged',
          ExpressionAttributeValues: { ':pk': keys.cooperativePartition(cooperativeId), ':f': FARMER_PREFIX, ':flagged': 'FLAGGED' },
          ExclusiveStartKey: start,
        }),
      );
      for (const i of r.Items ?? []) out.push(fromItem<Farmer>(i));
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /** Records a farm's forest-check result (gfw_status, checked_at, dataset). */
  async setForestCheck(
    farmerId: string,
    r: { status: Farmer['gfw_status']; checked_at: string; dataset: { name: string; version: string } },
  ): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.farmer(farmerId),
        UpdateExpression: 'SET gfw_status = :s, gfw_checked_at = :c, gfw_dataset = :d',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':s': r.status, ':c': r.checked_at, ':d': r.dataset },
      }),
    );
  }

  /**
   * Stores a farmer; with the job of a registration still waiting for MAAIF, the job goes into the
   * pending-national-check index in the same transaction. Errors: FARMER_ALREADY_REGISTERED (409).
   */
  async createFarmer(f: Farmer, job?: Job): Promise<void> {
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName(),
                Item: { ...keys.farmer(f.farmer_id), ...keys.farmerGsi(f.cooperative_id, f.farmer_id), entity: 'FARMER', ...f },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            ...(job
              ? [
                  {
                    Put: {
                      TableName: tableName(),
                      Item: {
                        ...keys.job(job.job_id),
                        ...keys.pendingNationalCheckGsi(f.registered_at, f.farmer_id),
                        entity: 'JOB',
                        ...job,
                      },
                    },
                  },
                ]
              : []),
          ],
        }),
      );
    } catch (err) {
      if (isTransactionCanceled(err)) throw new DomainError('FARMER_ALREADY_REGISTERED', `Farmer ${f.farmer_id} is already registered.`);
      throw err;
    }
  }

  /** Registrations waiting for MAAIF, oldest first: Query GSI2 PENDING_NATIONAL_CHECK (on their jobs). */
  async pendingNationalChecks(limit: number): Promise<PendingNationalCheck[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': PENDING_NATIONAL_CHECK },
        Limit: limit,
        ProjectionExpression: 'farmer_id, job_id, GSI2SK',
      }),
    );
    // GSI2SK is `<registered_at>#<farmer_id>`; an ISO timestamp holds no '#'.
    return (r.Items ?? []).map((i) => ({
      farmer_id: String(i.farmer_id),
      job_id: String(i.job_id),
      registered_at: String(i.GSI2SK).split('#')[0]!,
    }));
  }

  /**
   * The national registry answered a PENDING registration: the farmer and its job, with the job
   * leaving the pending-national-check index, in one transaction (idempotent).
   */
  async settleNationalCheck(farmerId: string, jobId: string, outcome: 'VERIFIED' | 'REJECTED', at: string): Promise<void> {
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: keys.farmer(farmerId),
                UpdateExpression: 'SET national_registry_status = :o, national_checked_at = :at',
                ConditionExpression: 'national_registry_status = :p',
                ExpressionAttributeValues: { ':o': outcome, ':p': 'PENDING', ':at': at },
              },
            },
            {
              Update: {
                TableName: tableName(),
                Key: keys.job(jobId),
                UpdateExpression: `SET #s = :s, completed_at = :at${outcome === 'REJECTED' ? ', #e = :e' : ''} REMOVE GSI2PK, GSI2SK`,
                ExpressionAttributeNames: { '#s': 'status', ...(outcome === 'REJECTED' ? { '#e': 'error' } : {}) },
                ExpressionAttributeValues: {
                  ':s': outcome === 'VERIFIED' ? 'COMPLETE' : 'FAILED',
                  ':at': at,
                  ...(outcome === 'REJECTED'
                    ? { ':e': { code: 'FARMER_NOT_REGISTERED', message: 'not an active farmer in the national farmer registry' } }
                    : {}),
                },
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err; // settled already
    }
  }

  /** Strongly consistent: a payout retry right after a phone correction must read the new phone. */
  /**
   * Every registered farmer, page by page (a Scan of the FARMER items; for one-off operator checks
   * such as `npm run farm-geometry-check`, never on a request path).
   */
  async *allFarmers(): AsyncGenerator<Farmer> {
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new ScanCommand({
          TableName: tableName(),
          FilterExpression: 'entity = :e',
          ExpressionAttributeValues: { ':e': 'FARMER' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of r.Items ?? []) yield fromItem<Farmer>(item);
      start = r.LastEvaluatedKey;
    } while (start);
  }

  async getFarmer(id: string): Promise<Farmer | null> {
    return readFarmer(id);
  }
}

/** A farmer by id (consistent read, so a phone just corrected is seen), or null. Standalone, so a bundle that only reads farmers does not carry the repository. */
export async function readFarmer(id: string): Promise<Farmer | null> {
  const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.farmer(id), ConsistentRead: true }));
  return r.Item ? fromItem<Farmer>(r.Item) : null;
}

/** A cooperative by id, or null. Standalone, like readFarmer. */
export async function readCooperative(id: string): Promise<Cooperative | null> {
  const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.cooperative(id) }));
  return r.Item ? fromItem<Cooperative>(r.Item) : null;
}
