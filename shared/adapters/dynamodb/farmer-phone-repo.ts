import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FarmerPhoneStore } from '../../domain/ports';
import type { Farmer } from '../../domain/records';
import { fromItem, keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/** Phone corrections on the farmer items of RegistryRepository (PATCH /farmers/{id}, decisions §11). */
export class FarmerPhoneRepository implements FarmerPhoneStore {
  /** PATCH /farmers/{id}: phone, phone_updated_at, updated_by, on the condition that the farmer is in `cooperative_id`; null otherwise. */
  async updateFarmerPhone(input: { farmer_id: string; cooperative_id: string; phone: string; actor: string; at: string }): Promise<Farmer | null> {
    try {
      const r = await documentClient().send(new UpdateCommand({
        TableName: tableName(), Key: keys.farmer(input.farmer_id),
        UpdateExpression: 'SET phone = :p, phone_updated_at = :at, updated_by = :by',
        ConditionExpression: 'attribute_exists(PK) AND cooperative_id = :c',
        ExpressionAttributeValues: { ':p': input.phone, ':at': input.at, ':by': input.actor, ':c': input.cooperative_id },
        ReturnValues: 'ALL_NEW',
      }));
      return fromItem<Farmer>(r.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailed(err)) return null;
      throw err;
    }
  }
}
