import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { FarmerFarmStore } from '../../domain/ports/registry';
import { keys } from './keys';
import { cancellationCodes, documentClient, isTransactionCanceled, tableName } from './table';

/**
 * Plot corrections on the farmer items of RegistryRepository (PUT /farmers/{id}/farm,
 * docs/api/eudr.md#correcting-a-plot): the farmer's plot and forest check replaced, and the
 * change's own record (`FARMER#<id>` / `FARM_CHANGE#<at>`, both plots) put, in one transaction.
 */
export class FarmerFarmRepository implements FarmerFarmStore {
  /**
   * One TransactWriteItems: the conditional update of the farmer (in `cooperative_id`, plot last
   * replaced at `previous_updated_at` or never) and the put of the change record (a new key);
   * false when either condition fails (nothing written).
   */
  async replaceFarm(input: Parameters<FarmerFarmStore['replaceFarm']>[0]): Promise<boolean> {
    const { forest } = input;
    const checked = forest.checked_at !== undefined && forest.dataset !== undefined;
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: keys.farmer(input.farmer_id),
                UpdateExpression: `SET farm = :farm, gfw_status = :s, farm_updated_at = :at, updated_by = :by, farm_changes = list_append(if_not_exists(farm_changes, :none), :change)${
                  checked ? ', gfw_checked_at = :c, gfw_dataset = :d' : ' REMOVE gfw_checked_at, gfw_dataset'
                }`,
                ConditionExpression: `attribute_exists(PK) AND cooperative_id = :coop AND ${
                  input.previous_updated_at === null ? 'attribute_not_exists(farm_updated_at)' : 'farm_updated_at = :prev'
                }`,
                ExpressionAttributeValues: {
                  ':farm': input.farm,
                  ':s': forest.status,
                  ':at': input.change.at,
                  ':by': input.change.actor,
                  ':none': [],
                  ':change': [input.change],
                  ':coop': input.cooperative_id,
                  ...(checked ? { ':c': forest.checked_at, ':d': forest.dataset } : {}),
                  ...(input.previous_updated_at === null ? {} : { ':prev': input.previous_updated_at }),
                },
              },
            },
            {
              Put: {
                TableName: tableName(),
                Item: {
                  ...keys.farmChange(input.farmer_id, input.change.at),
                  entity: 'FARM_CHANGE',
                  farmer_id: input.farmer_id,
                  cooperative_id: input.cooperative_id,
                  ...input.change,
                  previous_farm: input.previous_farm,
                  farm: input.farm,
                },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (isTransactionCanceled(err) && cancellationCodes(err).includes('ConditionalCheckFailed')) return false;
      throw err;
    }
    return true;
  }
}
