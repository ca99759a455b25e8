import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LedgerWriteGroups } from '../../domain/ports/ledger';
import type { BatchLedgerTx, LedgerTx, LedgerWriteGroup } from '../../domain/records';
import { batchGetItems, itemKey } from './batch-get';
import { fromItem, keys } from './keys';
import { cancellationCodes, documentClient, isConditionalCheckFailed, isTransactionCanceled, tableName } from './table';

/** Index entries read per page while looking for the ungrouped writes of a kind. */
const UNGROUPED_PAGE = 250;

/**
 * The batched transactions of the single ledger writer in DynamoDB (docs/ledger.md#the-batched-writer):
 * a group is one item `LEDGER_GROUP#<id>`; each member write is claimed with its own conditioned
 * update (`group_id`), the claims sent 100 to a transaction (`claimAll`): one write that is not
 * claimable drops out of its chunk, never holding the others back.
 */
export class LedgerWriteGroupRepository implements LedgerWriteGroups {
  /**
   * Pages through the ungrouped writes of `kind` (GSI1, oldest first; a write leaves it when a group
   * claims it), keeping the PENDING, unsigned, unclaimed, unparked ones (the index is kept in the
   * same updates that change those, and the filter makes sure).
   */
  async pendingOfKind(kind: 'MINT' | 'TRACE_STAGE', limit: number): Promise<BatchLedgerTx[]> {
    const writes: BatchLedgerTx[] = [];
    const { GSI1PK } = keys.ungroupedLedgerTxGsi(kind, '', '');
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          FilterExpression:
            '#s = :p AND attribute_not_exists(raw_tx) AND attribute_not_exists(group_id) AND attribute_not_exists(parked_at)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':pk': GSI1PK, ':p': 'PENDING' },
          Limit: Math.min(UNGROUPED_PAGE, limit),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of r.Items ?? []) if (writes.length < limit) writes.push(fromItem<BatchLedgerTx>(item));
      start = r.LastEvaluatedKey;
    } while (start && writes.length < limit);
    return writes;
  }

  /** Stores a new group; Error when one with its id exists. */
  async create(group: LedgerWriteGroup): Promise<void> {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.ledgerGroup(group.group_id), entity: 'LEDGER_GROUP', ...group },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async getGroup(id: string): Promise<LedgerWriteGroup | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.ledgerGroup(id), ConsistentRead: true }));
    return r.Item ? fromItem<LedgerWriteGroup>(r.Item) : null;
  }

  /** Two BatchGetItem rounds (`batchGetItems`, needs `table:batch-read`): the writes, then the distinct groups they name. */
  async writesWithGroups(ids: readonly string[]): Promise<Array<{ tx: LedgerTx | null; group: LedgerWriteGroup | null }>> {
    if (ids.length === 0) return [];
    const writes = await batchGetItems(ids.map((id) => keys.ledgerTx(id)));
    const txs = ids.map((id) => {
      const item = writes.get(itemKey(keys.ledgerTx(id)));
      return item ? fromItem<LedgerTx>(item) : null;
    });
    const groupOf = (t: LedgerTx | null) => (t && (t.kind === 'MINT' || t.kind === 'TRACE_STAGE') ? t.group_id : undefined);
    const groupIds = [...new Set(txs.map(groupOf).filter((g): g is string => Boolean(g)))];
    const groups = groupIds.length
      ? await batchGetItems(groupIds.map((g) => keys.ledgerGroup(g)))
      : new Map<string, Record<string, unknown>>();
    return txs.map((tx) => {
      const groupId = groupOf(tx);
      const item = groupId ? groups.get(itemKey(keys.ledgerGroup(groupId))) : undefined;
      return { tx, group: item ? fromItem<LedgerWriteGroup>(item) : null };
    });
  }

  /**
   * Up to `CLAIMS_ALONE` candidates: each its own conditioned UpdateItem, all at once, each
   * answering the write as it stands (one round trip, no transaction: a lone write is not held
   * behind other requests' transactions). More: TransactWriteItems of up to
   * `CLAIMS_PER_TRANSACTION` conditioned updates (the chunks of one call concurrent); a chunk
   * cancelled for its conditions is written again without the writes whose condition failed (those
   * are not claimable: null), one cancelled for a conflict with another request again after a
   * pause; then the claimed writes are read back in batch (`batchGetItems`, needs
   * `table:batch-read`), unless the caller gave them (`known`: each claimed one answered as its copy
   * with `group_id` set). Errors: the store's; Error when a chunk is still cancelled after
   * `CLAIM_ROUNDS` rounds.
   */
  async claimAll(groupId: string, ledgerTxIds: readonly string[], known?: readonly BatchLedgerTx[]): Promise<Array<BatchLedgerTx | null>> {
    if (ledgerTxIds.length <= CLAIMS_ALONE) return Promise.all(ledgerTxIds.map((id) => claimOne(groupId, id)));
    const chunks: string[][] = [];
    for (let i = 0; i < ledgerTxIds.length; i += CLAIMS_PER_TRANSACTION) chunks.push(ledgerTxIds.slice(i, i + CLAIMS_PER_TRANSACTION));
    const claimed = new Set((await Promise.all(chunks.map((chunk) => claimChunk(groupId, chunk)))).flat());
    if (known && known.length === ledgerTxIds.length && known.every((w, i) => w.ledger_tx_id === ledgerTxIds[i]))
      return known.map((w) => (claimed.has(w.ledger_tx_id) ? { ...w, group_id: groupId } : null));
    const items = claimed.size
      ? await batchGetItems([...claimed].map((id) => keys.ledgerTx(id)))
      : new Map<string, Record<string, unknown>>();
    return ledgerTxIds.map((id) => {
      const item = claimed.has(id) ? items.get(itemKey(keys.ledgerTx(id))) : undefined;
      const tx = item ? fromItem<BatchLedgerTx>(item) : null;
      return tx && tx.group_id === groupId ? tx : null;
    });
  }

  /** Released, the write is among the ungrouped writes of its kind again (GSI1, keyed by its kind and creation time). */
  async release(groupId: string, write: Pick<BatchLedgerTx, 'ledger_tx_id' | 'kind' | 'created_at'>): Promise<boolean> {
    const ungrouped = keys.ungroupedLedgerTxGsi(write.kind, write.created_at, write.ledger_tx_id);
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.ledgerTx(write.ledger_tx_id),
          UpdateExpression: 'SET GSI1PK = :upk, GSI1SK = :usk REMOVE group_id',
          ConditionExpression: 'group_id = :g AND #s = :p AND attribute_not_exists(raw_tx) AND attribute_not_exists(parked_at)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':g': groupId, ':p': 'PENDING', ':upk': ungrouped.GSI1PK, ':usk': ungrouped.GSI1SK },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async setMembers(
    groupId: string,
    members: string[],
    splitOut: Array<{ ledger_tx_id: string; reason: string }>,
    at: string,
  ): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.ledgerGroup(groupId),
        UpdateExpression:
          'SET #s = :sealed, members = :m, split_out = list_append(if_not_exists(split_out, :none), :out), members_set_at = :at',
        ConditionExpression: '(#s = :sealed OR #s = :claiming) AND attribute_not_exists(raw_tx)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':m': members,
          ':none': [],
          ':out': splitOut.map((o) => ({ ledger_tx_id: o.ledger_tx_id, reason: o.reason.slice(0, 500) })),
          ':sealed': 'SEALED',
          ':claiming': 'CLAIMING',
          ':at': at,
        },
      }),
    );
  }

  /**
   * The group (CLAIMING or SEALED, unsigned) SENT with its signed transaction and `members`, in one transaction with the signer's record
   * (`LEDGER_SIGNER`): next_nonce = nonce + 1 (refused when above the nonce already) and the group in flight.
   */
  async keepSigned(
    groupId: string,
    signed: { rawTx: string; txHash: string; nonce: number },
    at: string,
    sentBlock: number | undefined,
    members: string[],
  ): Promise<void> {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.ledgerGroup(groupId),
              UpdateExpression: `SET raw_tx = :r, tx_hash = :h, nonce = :n, members = :m, #s = :sent, sent_at = :at${sentBlock !== undefined ? ', sent_block = :b' : ''}`,
              ConditionExpression: '(#s = :sealed OR #s = :claiming) AND attribute_not_exists(raw_tx)',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ':r': signed.rawTx,
                ':h': signed.txHash,
                ':n': signed.nonce,
                ':sent': 'SENT',
                ':sealed': 'SEALED',
                ':claiming': 'CLAIMING',
                ':m': members,
                ':at': at,
                ...(sentBlock !== undefined ? { ':b': sentBlock } : {}),
              },
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: keys.ledgerSigner(),
              UpdateExpression: 'SET next_nonce = :next, entity = :e ADD in_flight :g',
              ConditionExpression: 'attribute_not_exists(next_nonce) OR next_nonce <= :n',
              ExpressionAttributeValues: { ':next': signed.nonce + 1, ':n': signed.nonce, ':g': new Set([groupId]), ':e': 'LEDGER_SIGNER' },
            },
          },
        ],
      }),
    );
  }

  async keepReplacement(
    groupId: string,
    oldHash: string,
    signed: { rawTx: string; txHash: string },
    sentBlock: number,
    at: string,
  ): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.ledgerGroup(groupId),
        UpdateExpression:
          'SET raw_tx = :r, tx_hash = :h, sent_block = :b, replaced_at = :at, replaced_hashes = list_append(if_not_exists(replaced_hashes, :none), :old)',
        ConditionExpression: '#s = :sent AND tx_hash = :oldh',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':r': signed.rawTx,
          ':h': signed.txHash,
          ':b': sentBlock,
          ':at': at,
          ':none': [],
          ':old': [oldHash],
          ':oldh': oldHash,
          ':sent': 'SENT',
        },
      }),
    );
  }

  async nextNonce(): Promise<number | undefined> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.ledgerSigner(), ConsistentRead: true }));
    return typeof r.Item?.next_nonce === 'number' ? r.Item.next_nonce : undefined;
  }

  /**
   * The groups named in the signer's in_flight set, each read consistently (a handful: the groups
   * sent within the last blocks; GetItem, so the writer needs no batch-read grant), lowest nonce first.
   */
  async inFlight(): Promise<LedgerWriteGroup[]> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.ledgerSigner(), ConsistentRead: true }));
    const ids = [...((r.Item?.in_flight as Set<string> | undefined) ?? [])];
    const groups = await Promise.all(ids.map((id) => this.getGroup(id)));
    return groups.filter((g): g is LedgerWriteGroup => g?.status === 'SENT').sort((a, b) => (a.nonce ?? 0) - (b.nonce ?? 0));
  }

  /** The group SETTLED and out of the signer's in_flight set, in one transaction. */
  async settle(groupId: string, blockNumber: number | undefined, at: string): Promise<void> {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.ledgerGroup(groupId),
              UpdateExpression: `SET #s = :settled, settled_at = :at${blockNumber !== undefined ? ', block_number = :b' : ''}`,
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':settled': 'SETTLED', ':at': at, ...(blockNumber !== undefined ? { ':b': blockNumber } : {}) },
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: keys.ledgerSigner(),
              UpdateExpression: 'DELETE in_flight :g',
              ExpressionAttributeValues: { ':g': new Set([groupId]) },
            },
          },
        ],
      }),
    );
  }
}

/** Candidates up to which each claim is its own UpdateItem (see `claimAll`). */
const CLAIMS_ALONE = 10;

/** The condition a claim writes under: the write PENDING, unsigned, unclaimed and not parked, or claimed by this group already. */
const CLAIMABLE =
  'group_id = :g OR (#s = :p AND attribute_not_exists(raw_tx) AND attribute_not_exists(group_id) AND attribute_not_exists(parked_at))';

/** The conditioned update that claims write `id` for the group (it leaves the ungrouped writes' index): alone or in a transaction. */
function claimUpdate(groupId: string, id: string) {
  return {
    TableName: tableName(),
    Key: keys.ledgerTx(id),
    UpdateExpression: 'SET group_id = :g REMOVE GSI1PK, GSI1SK',
    ConditionExpression: CLAIMABLE,
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':g': groupId, ':p': 'PENDING' },
  };
}

/** One write claimed for the group with its own conditioned update: the write as it stands, or null when it is not claimable. */
async function claimOne(groupId: string, id: string): Promise<BatchLedgerTx | null> {
  try {
    const r = await documentClient().send(new UpdateCommand({ ...claimUpdate(groupId, id), ReturnValues: 'ALL_NEW' }));
    return fromItem<BatchLedgerTx>(r.Attributes!);
  } catch (err) {
    if (isConditionalCheckFailed(err)) return null;
    throw err;
  }
}

/** DynamoDB's most items in one TransactWriteItems request. */
const CLAIMS_PER_TRANSACTION = 100;

/** Rounds of one chunk of claims (each drops the writes whose condition failed, or waits out a conflict) before it is an error. */
const CLAIM_ROUNDS = 8;

/**
 * Claims the writes `ids` (at most 100) for the group in one transaction; the ids claimed (each
 * PENDING, unsigned, unclaimed and not parked, or claimed by this group already). See `claimAll`.
 */
async function claimChunk(groupId: string, ids: readonly string[]): Promise<string[]> {
  let left = [...ids];
  for (let round = 0; left.length > 0; round++) {
    if (round >= CLAIM_ROUNDS)
      throw new Error(`claiming ${left.length} ledger writes for group ${groupId}: still cancelled after ${CLAIM_ROUNDS} rounds`);
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: left.map((id) => ({ Update: claimUpdate(groupId, id) })),
        }),
      );
      return left;
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err;
      const codes = cancellationCodes(err);
      const failed = new Set(left.filter((_, i) => codes[i] === 'ConditionalCheckFailed'));
      if (failed.size > 0) left = left.filter((id) => !failed.has(id));
      else if (codes.some((c) => c === 'TransactionConflict' || c === 'ThrottlingError'))
        await new Promise((r) => setTimeout(r, 20 * 2 ** round));
      else throw err;
    }
  }
  return left;
}
