import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FarmerPhoneStore } from '../../domain/ports/registry';
import type { Farmer, PhoneChange } from '../../domain/records';
import { fromItem, keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/** Phone corrections on the farmer items of RegistryRepository (PATCH /farmers/{id}, docs/api/payouts.md#manual-review). */
export class FarmerPhoneRepository implements FarmerPhoneStore {
  /**
   * PATCH /farmers/{id}: phone, phone_updated_at, updated_by and the change appended to
   * `phone_changes`, in one update conditioned on the farmer being in `cooperative_id` with the
   * phone `previous_phone` (so two concurrent changes cannot both claim the same old number); null otherwise.
   */
  async updateFarmerPhone(input: {
    farmer_id: string;
    cooperative_id: string;
    phone: string;
    previous_phone: string | null;
    actor: string;
    at: string;
    change: PhoneChange;
  }): Promise<Farmer | null> {
    try {
      const r = await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.farmer(input.farmer_id),
          UpdateExpression:
            'SET phone = :p, phone_updated_at = :at, updated_by = :by, phone_changes = list_append(if_not_exists(phone_changes, :none), :change)',
          ConditionExpression: `attribute_exists(PK) AND cooperative_id = :c AND ${input.previous_phone === null ? 'attribute_not_exists(phone)' : 'phone = :old'}`,
          ExpressionAttributeValues: {
            ':p': input.phone,
            ':at': input.at,
            ':by': input.actor,
            ':c': input.cooperative_id,
            ':none': [],
            ':change': [input.change],
            ...(input.previous_phone === null ? {} : { ':old': input.previous_phone }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem<Farmer>(r.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailed(err)) return null;
      throw err;
    }
  }
}
