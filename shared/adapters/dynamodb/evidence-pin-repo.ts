import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EvidencePinStatusStore } from '../../domain/ports';
import type { EvidencePinStatus } from '../../domain/records';
import { keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/**
 * Pin statuses (decisions §14) on the items they belong to: a batch's stage-history entry
 * (`stage_history[i].evidence_pin_status`) and a DDS (`ipfs_pin_status`, `ipfs_pin_updated_at`).
 * Each update is conditional on the item still naming the CID and not being PINNED already, so a
 * late FAILED never overwrites PINNED and a redelivered job changes nothing.
 */
export class EvidencePinRepository implements EvidencePinStatusStore {
  async setStagePinStatus(batchId: string, historyIndex: number, cid: string, status: EvidencePinStatus, _at: string): Promise<boolean> {
    if (!Number.isInteger(historyIndex) || historyIndex < 0) throw new Error(`setStagePinStatus: bad history index ${historyIndex}`);
    const entry = `stage_history[${historyIndex}]`;
    return this.update({
      Key: keys.batch(batchId),
      UpdateExpression: `SET ${entry}.evidence_pin_status = :s`,
      ConditionExpression: `${entry}.evidence_ipfs_cid = :cid AND (attribute_not_exists(${entry}.evidence_pin_status) OR ${entry}.evidence_pin_status <> :pinned)`,
      ExpressionAttributeValues: { ':s': status, ':cid': cid, ':pinned': 'PINNED' },
    });
  }

  async setDdsPinStatus(ddsId: string, cid: string, status: EvidencePinStatus, at: string): Promise<boolean> {
    return this.update({
      Key: keys.dds(ddsId),
      UpdateExpression: 'SET ipfs_pin_status = :s, ipfs_pin_updated_at = :at',
      ConditionExpression: 'ipfs_cid = :cid AND (attribute_not_exists(ipfs_pin_status) OR ipfs_pin_status <> :pinned)',
      ExpressionAttributeValues: { ':s': status, ':at': at, ':cid': cid, ':pinned': 'PINNED' },
    });
  }

  private async update(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<boolean> {
    try {
      await documentClient().send(new UpdateCommand({ TableName: tableName(), ...input }));
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}
