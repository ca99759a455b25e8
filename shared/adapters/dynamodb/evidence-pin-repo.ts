import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { EvidencePinMessage, EvidencePinStatusStore } from '../../domain/ports/evidence';
import type { EvidencePinStatus } from '../../domain/records';
import { keys, PENDING_PIN } from './keys';
import { conditionalUpdate, documentClient, tableName } from './table';

/** The key of a pin job from its message. */
const pinJobKey = (msg: EvidencePinMessage) =>
  keys.pinJob(msg.cid, msg.kind === 'DDS' ? { dds_id: msg.dds_id } : { batch_id: msg.batch_id, history_index: msg.history_index });

/**
 * The pin job item of `msg`, open (in the PENDING_PIN index) from `at`: a Put for the transaction
 * that commits the stage change or the DDS naming the CID, so a pin job lost between that commit
 * and the queue is found by reconciliation ({@link EvidencePinRepository.stalePinJobs}).
 */
export function pinJobPut(msg: EvidencePinMessage, at: string) {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...pinJobKey(msg), ...keys.pendingPinGsi(at, msg.cid), entity: 'PIN_JOB', message: msg, queued_at: at, requeues: 0 },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

/**
 * Pin statuses (docs/api/evidence.md#evidence-on-ipfs) on the items they belong to: a batch's stage-history entry
 * (`stage_history[i].evidence_pin_status`).
 * Each update is conditional on the item still naming the CID and not being PINNED already, so a
 * late FAILED never overwrites PINNED and a redelivered job changes nothing.
 */
export class EvidencePinRepository implements EvidencePinStatusStore {
  async setStagePinStatus(batchId: string, historyIndex: number, cid: string, status: EvidencePinStatus, _at: string): Promise<boolean> {
    if (!Number.isInteger(historyIndex) || historyIndex < 0) throw new Error(`setStagePinStatus: bad history index ${historyIndex}`);
    const entry = `stage_history[${historyIndex}]`;
    return conditionalUpdate({
      Key: keys.batch(batchId),
      UpdateExpression: `SET ${entry}.evidence_pin_status = :s`,
      ConditionExpression: `${entry}.evidence_ipfs_cid = :cid AND (attribute_not_exists(${entry}.evidence_pin_status) OR ${entry}.evidence_pin_status <> :pinned)`,
      ExpressionAttributeValues: { ':s': status, ':cid': cid, ':pinned': 'PINNED' },
    });
  }

  async closePinJob(msg: EvidencePinMessage, at: string): Promise<void> {
    await conditionalUpdate({
      Key: pinJobKey(msg),
      UpdateExpression: 'SET closed_at = :at REMOVE GSI2PK, GSI2SK',
      ConditionExpression: 'attribute_exists(GSI2PK)',
      ExpressionAttributeValues: { ':at': at },
    });
  }

  async stalePinJobs(before: string, limit: number): Promise<Array<{ message: EvidencePinMessage; requeues: number }>> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :b',
        ExpressionAttributeValues: { ':pk': PENDING_PIN, ':b': before },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => ({ message: i.message as EvidencePinMessage, requeues: Number(i.requeues ?? 0) }));
  }

  async markPinJobRequeued(msg: EvidencePinMessage, at: string, opts: { giveUp?: boolean } = {}): Promise<boolean> {
    return opts.giveUp
      ? conditionalUpdate({
          Key: pinJobKey(msg),
          UpdateExpression: 'SET given_up_at = :at, closed_at = :at REMOVE GSI2PK, GSI2SK',
          ConditionExpression: 'attribute_exists(GSI2PK)',
          ExpressionAttributeValues: { ':at': at },
        })
      : conditionalUpdate({
          Key: pinJobKey(msg),
          UpdateExpression: 'SET GSI2SK = :sk, requeued_at = :at ADD requeues :one',
          ConditionExpression: 'attribute_exists(GSI2PK)',
          ExpressionAttributeValues: { ':sk': keys.pendingPinGsi(at, msg.cid).GSI2SK, ':at': at, ':one': 1 },
        });
  }
}
