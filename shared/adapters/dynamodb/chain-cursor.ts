import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ChainCursorStore } from '../../domain/ports/chain-watch';
import { keys } from './keys';
import { conditionalUpdate, documentClient, isConditionalCheckFailed, tableName } from './table';

/**
 * The chain watcher's cursor (`CHAIN_CURSOR#<chain_id>` / META, keys.ts): `next_block` (the first
 * block not yet processed), and the lease `lease_owner` / `lease_until_ms` (epoch ms). Every
 * change is one conditional UpdateItem, so two runs cannot both hold the lease, and the cursor
 * moves only from where its holder found it:
 * - claim: `SET lease_owner, lease_until_ms, next_block = if_not_exists(next_block, start)` IF no
 *   lease or an expired one (`lease_until_ms <= now`);
 * - advance: `SET next_block = :next` IF `lease_owner = me AND next_block = :from`;
 * - release: `SET lease_until_ms = 0 REMOVE lease_owner` IF `lease_owner = me`.
 * Block numbers are stored as numbers (exact up to 2^53).
 */
export class DynamoChainCursorStore implements ChainCursorStore {
  constructor(private readonly chainId: number) {}

  async claim(owner: string, now: Date, leaseUntil: Date, startBlock: bigint): Promise<{ nextBlock: bigint } | null> {
    try {
      const r = await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.chainCursor(this.chainId),
          UpdateExpression:
            'SET lease_owner = :owner, lease_until_ms = :until, next_block = if_not_exists(next_block, :start), entity = :entity, chain_id = :chain, claimed_at = :at',
          ConditionExpression: 'attribute_not_exists(lease_until_ms) OR lease_until_ms <= :now',
          ExpressionAttributeValues: {
            ':owner': owner,
            ':until': leaseUntil.getTime(),
            ':start': Number(startBlock),
            ':entity': 'CHAIN_CURSOR',
            ':chain': this.chainId,
            ':at': now.toISOString(),
            ':now': now.getTime(),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { nextBlock: BigInt(r.Attributes!.next_block as number) };
    } catch (err) {
      if (isConditionalCheckFailed(err)) return null;
      throw err;
    }
  }

  async advance(owner: string, fromBlock: bigint, nextBlock: bigint): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.chainCursor(this.chainId),
      UpdateExpression: 'SET next_block = :next',
      ConditionExpression: 'lease_owner = :owner AND next_block = :from',
      ExpressionAttributeValues: { ':owner': owner, ':from': Number(fromBlock), ':next': Number(nextBlock) },
    });
  }

  async release(owner: string): Promise<void> {
    // Not holding the lease (any more) is fine: there is nothing to give up.
    await conditionalUpdate({
      Key: keys.chainCursor(this.chainId),
      UpdateExpression: 'SET lease_until_ms = :zero REMOVE lease_owner',
      ConditionExpression: 'lease_owner = :owner',
      ExpressionAttributeValues: { ':owner': owner, ':zero': 0 },
    });
  }
}
