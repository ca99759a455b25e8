import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DdsOfBatchReader, DdsStore, DdsV3Status } from '../../domain/ports/eudr';
import { DDS_LARGE_PARTS, type StoredDdsRecord } from '../../domain/dds';
import { transactWithAudit } from './audit-append';
import { keys, fromItem } from './keys';
import { documentClient, isConditionalCheckFailed, isTransactionCanceled, tableName } from './table';

/** Thrown inside an append when the batch already carries the statement's numbers. */
class AlreadyRecorded extends Error {}

/** Due diligence statements: one per batch or purchase order (a guard item), filed once. */
export class DdsRepository implements DdsStore, DdsOfBatchReader {
  /** Stores a new DDS; returns the existing DDS id of its batch (or purchase order) instead when it already has one. */
  async create(dds: StoredDdsRecord): Promise<string | null> {
    const guard = dds.batch_id !== null ? keys.ddsOfBatch(dds.batch_id) : keys.ddsOfPurchaseOrder(dds.purchase_order_id!);
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName(),
                Item: { ...guard, entity: 'DDS_GUARD', dds_id: dds.dds_id },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            {
              Put: {
                TableName: tableName(),
                Item: { ...keys.dds(dds.dds_id), entity: 'DDS', ...dds },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
          ],
        }),
      );
      return null;
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err;
      const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: guard, ConsistentRead: true }));
      if (!r.Item) throw err;
      return String(r.Item.dds_id);
    }
  }

  /** The batch's statement through its guard item, else null. */
  async ofBatch(batchId: string): Promise<StoredDdsRecord | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.ddsOfBatch(batchId) }));
    return r.Item ? this.get(String(r.Item.dds_id)) : null;
  }

  async get(id: string): Promise<StoredDdsRecord | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.dds(id), ConsistentRead: true }));
    return r.Item ? fromItem<StoredDdsRecord>(r.Item) : null;
  }

  /** PENDING_FILING → SUBMITTED with the registry's UUID (once). */
  async markSubmitted(id: string, uuid: string, at: string): Promise<void> {
    await this.update(
      id,
      'SET #s = :s, registry_uuid = :u, filed_at = :at',
      { ':s': 'SUBMITTED', ':u': uuid, ':at': at, ':from': 'PENDING_FILING' },
      '#s = :from',
    );
  }

  /** SUBMITTED → AVAILABLE with the reference and verification numbers. */
  async markAvailable(id: string, reference: string, verification: string, at: string): Promise<boolean> {
    return this.update(
      id,
      'SET #s = :s, reference_number = :r, verification_number = :v, available_at = :at',
      { ':s': 'AVAILABLE', ':r': reference, ':v': verification, ':at': at, ':from': 'SUBMITTED' },
      '#s = :from',
    );
  }

  /** PENDING_FILING or SUBMITTED → REJECTED with the registry's reason. */
  async markRejected(id: string, reason: string, at: string): Promise<boolean> {
    return this.update(
      id,
      'SET #s = :s, rejection_reason = :r, rejected_at = :at',
      { ':s': 'REJECTED', ':r': reason, ':at': at, ':a': 'PENDING_FILING', ':b': 'SUBMITTED' },
      '#s IN (:a, :b)',
    );
  }

  /**
   * AVAILABLE → SUBMITTED with the amended statement's fields, CID and documents; counts the
   * amendment. With new `documents`, the inline parts of an older statement are removed in the same update.
   */
  async markAmended(id: string, changes: Partial<StoredDdsRecord>, at: string): Promise<boolean> {
    const fields = Object.entries(changes).filter(([k, v]) => v !== undefined && !['dds_id', 'status', 'cooperative_id'].includes(k));
    const names: Record<string, string> = { '#s': 'status' };
    const values: Record<string, unknown> = { ':s': 'SUBMITTED', ':from': 'AVAILABLE', ':at': at, ':zero': 0, ':one': 1 };
    const sets = fields.map(([k, v], i) => {
      names[`#f${i}`] = k;
      values[`:f${i}`] = v;
      return `#f${i} = :f${i}`;
    });
    const removed = changes.documents ? DDS_LARGE_PARTS.filter((p) => changes[p] === undefined) : [];
    const removes = removed.map((p, i) => {
      names[`#r${i}`] = p;
      return `#r${i}`;
    });
    return this.update(
      id,
      `SET #s = :s, amended_at = :at, amendments = if_not_exists(amendments, :zero) + :one${sets.length ? `, ${sets.join(', ')}` : ''}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      values,
      '#s = :from',
      names,
    );
  }

  /**
   * The statement's numbers on a covered batch (`dds`) with a DDS_AVAILABLE audit entry, one
   * transaction (transactWithAudit); false when the batch already carries them (checked on every
   * read of its head, so a redelivered filing appends nothing twice).
   */
  async recordOnBatch(
    batchId: string,
    dds: { dds_id: string; reference_number: string; verification_number: string },
    at: string,
  ): Promise<boolean> {
    const same = (head: Record<string, unknown>) => {
      const d = head.dds as typeof dds | undefined;
      return d?.dds_id === dds.dds_id && d.reference_number === dds.reference_number && d.verification_number === dds.verification_number;
    };
    try {
      await transactWithAudit({
        batchId,
        items: [],
        entry: { type: 'DDS_AVAILABLE', at, actor: 'dds-filer', payload: { ...dds } },
        batchSet: { expression: 'dds = :dds', values: { ':dds': { ...dds } } },
        checkHead: (head) => {
          if (same(head)) throw new AlreadyRecorded();
        },
      });
      return true;
    } catch (err) {
      if (err instanceof AlreadyRecorded) return false;
      throw err;
    }
  }

  /**
   * A withdrawal on a covered batch: its `dds` marked WITHDRAWN with a DDS_WITHDRAWN audit entry, one
   * transaction (transactWithAudit); false when the batch's `dds` names another statement or none,
   * or is withdrawn already (checked on every read of its head, so a redelivery appends nothing twice).
   */
  async recordWithdrawalOnBatch(
    batchId: string,
    dds: { dds_id: string; reference_number: string; verification_number: string },
    withdrawnAt: string,
  ): Promise<boolean> {
    const withdrawn = { ...dds, status: 'WITHDRAWN', withdrawn_at: withdrawnAt };
    try {
      await transactWithAudit({
        batchId,
        items: [],
        entry: { type: 'DDS_WITHDRAWN', at: withdrawnAt, actor: 'dds-filer', payload: { ...dds, withdrawn_at: withdrawnAt } },
        batchSet: { expression: 'dds = :dds', values: { ':dds': withdrawn } },
        checkHead: (head) => {
          const d = head.dds as { dds_id?: string; status?: string } | undefined;
          if (d?.dds_id !== dds.dds_id || d.status === 'WITHDRAWN') throw new AlreadyRecorded();
        },
      });
      return true;
    } catch (err) {
      if (err instanceof AlreadyRecorded) return false;
      throw err;
    }
  }

  /** AVAILABLE → WITHDRAWN. */
  async markWithdrawn(id: string, at: string): Promise<boolean> {
    return this.update(id, 'SET #s = :s, withdrawn_at = :at', { ':s': 'WITHDRAWN', ':at': at, ':from': 'AVAILABLE' }, '#s = :from');
  }

  /** SUBMITTED or AVAILABLE → a later V3 status the registry reports (GROUPED, ARCHIVED, WITHDRAWN…). */
  async markRegistryStatus(id: string, status: DdsV3Status, at: string): Promise<boolean> {
    return this.update(
      id,
      'SET #s = :s, registry_status_at = :at',
      { ':s': status, ':at': at, ':a': 'SUBMITTED', ':b': 'AVAILABLE' },
      '#s IN (:a, :b)',
    );
  }

  private async update(
    id: string,
    expression: string,
    values: Record<string, unknown>,
    condition: string,
    names: Record<string, string> = { '#s': 'status' },
  ): Promise<boolean> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.dds(id),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}
