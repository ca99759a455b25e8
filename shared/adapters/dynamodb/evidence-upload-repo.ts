import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { EvidenceUpload } from '../../domain/evidence-upload';
import type { EvidenceUploadStore } from '../../domain/ports/evidence';
import type { Stage } from '../../domain/records';
import { fromItem, keys } from './keys';
import { conditionalUpdate, documentClient, tableName } from './table';

/** Upload records are kept one day past their attach window, then DynamoDB's TTL removes them. */
const KEEP_AFTER_ATTACH_WINDOW_S = 24 * 3600;

/**
 * Evidence upload records (`EVIDENCE_UPLOAD#<UPL-…>`, META; shared/adapters/dynamodb/keys.ts):
 * created with a conditional put, attached to a stage with a conditional update.
 */
export class EvidenceUploadRepository implements EvidenceUploadStore {
  async create(upload: EvidenceUpload): Promise<void> {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.evidenceUpload(upload.upload_id),
          entity: 'EVIDENCE_UPLOAD',
          ...upload,
          expires_at_epoch: Math.floor(Date.parse(upload.attach_by) / 1000) + KEEP_AFTER_ATTACH_WINDOW_S,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async get(uploadId: string): Promise<EvidenceUpload | null> {
    const r = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.evidenceUpload(uploadId), ConsistentRead: true }),
    );
    return r.Item ? fromItem<EvidenceUpload>(r.Item) : null;
  }

  async consume(uploadId: string, stage: Stage, at: string): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.evidenceUpload(uploadId),
      UpdateExpression: 'SET consumed_stage = :stage, consumed_at = if_not_exists(consumed_at, :at)',
      ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(consumed_stage) OR consumed_stage = :stage)',
      ExpressionAttributeValues: { ':stage': stage, ':at': at },
    });
  }
}
