import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './table';

/** DynamoDB's most keys per BatchGetItem request. */
const BATCH_GET_KEYS = 100;

/** Rounds of a request whose keys DynamoDB keeps leaving unprocessed before it is an error. */
const MAX_ROUNDS = 8;

/** The lookup key of an item in the map `batchGetItems` returns. */
export const itemKey = (k: { PK: string; SK: string }): string => `${k.PK}\u0000${k.SK}`;

/**
 * Reads the items of `keyList` from the single table with BatchGetItem (consistent reads, 100
 * keys a request, the requests of one call concurrent; unprocessed keys asked again with
 * exponential backoff). Returns the items found, by `itemKey`; a key without an item is absent.
 * `attributes` (plain attribute names, not reserved words) reads only those, PK and SK added.
 * Needs `table:batch-read`. Errors: the store's; Error when keys stay unprocessed after 8 rounds.
 */
export async function batchGetItems(
  keyList: ReadonlyArray<{ PK: string; SK: string }>,
  attributes?: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const projection = attributes ? { ProjectionExpression: [...new Set(['PK', 'SK', ...attributes])].join(', ') } : {};
  const found = new Map<string, Record<string, unknown>>();
  const distinct = [...new Map(keyList.map((k) => [itemKey(k), { PK: k.PK, SK: k.SK }])).values()];
  const chunks: Array<Array<{ PK: string; SK: string }>> = [];
  for (let i = 0; i < distinct.length; i += BATCH_GET_KEYS) chunks.push(distinct.slice(i, i + BATCH_GET_KEYS));
  await Promise.all(
    chunks.map(async (chunk) => {
      let left: Array<Record<string, unknown>> = chunk;
      for (let round = 0; left.length > 0; round++) {
        if (round > MAX_ROUNDS) throw new Error(`reading ${left.length} items: DynamoDB keeps leaving keys unprocessed`);
        if (round > 0) await new Promise((r) => setTimeout(r, 25 * 2 ** round));
        const r = await documentClient().send(
          new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: left, ConsistentRead: true, ...projection } } }),
        );
        for (const item of r.Responses?.[tableName()] ?? []) found.set(itemKey(item as { PK: string; SK: string }), item);
        left = (r.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
      }
    }),
  );
  return found;
}
