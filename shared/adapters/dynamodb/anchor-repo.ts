import {
  GetCommand,
  paginateQuery,
  paginateScan,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { AuditHead, BatchAnchor } from '../../domain/anchoring';
import type { AuditAnchorStore } from '../../domain/ports/audit';
import type { AnchorLedgerTx, AuditAnchorRecord } from '../../domain/records';
import { anchorMarkerPut, type TransactItem } from './audit-append';
import { batchGetItems } from './batch-get';
import { fromItem, keys, UNANCHORED } from './keys';
import { ledgerTxItem } from './ledger-tx';
import { cancellationCodes, conditionalUpdate, documentClient, isConditionalCheckFailed, isTransactionCanceled, tableName } from './table';

/**
 * Heads (and marker ids) per part item of an anchor: a head with its proof is ~90 + 67 × depth
 * bytes (depth 17 for 100,000 heads: ~1.2 KB), so 250 keep a part under DynamoDB's 400 KB.
 */
const PART_SIZE = 250;
/** DynamoDB's most items per transaction. */
const TRANSACTION_ITEMS = 100;

/**
 * Periodic anchors in the single table (docs/api/anchoring.md#anchoring-of-the-audit-log; keys.ts): the pending markers audit appends
 * write (shared/adapters/dynamodb/audit-append.ts), the anchors with their heads in parts, the
 * pointer to the open anchor, and each batch's mined anchors with their proofs. Nothing is deleted
 * (IAM denies it): a settled marker leaves the GSI2 index instead.
 */
export class AuditAnchorRepository implements AuditAnchorStore {
  async pendingMarkers(limit: number): Promise<Array<{ marker_id: string; batch_ids: string[] }>> {
    const out: Array<{ marker_id: string; batch_ids: string[] }> = [];
    const pages = paginateQuery(
      { client: documentClient(), pageSize: Math.min(1000, limit) },
      {
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :p',
        ExpressionAttributeValues: { ':p': UNANCHORED },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? [])
        if (out.length < limit) out.push({ marker_id: String(item.marker_id), batch_ids: (item.batch_ids as string[]) ?? [] });
      if (out.length >= limit) break;
    }
    return out;
  }

  async heads(batchIds: string[]): Promise<AuditHead[]> {
    const items = await batchGetItems(
      batchIds.map((b) => keys.batch(b)),
      ['batch_id', 'audit_seq', 'audit_head_hash'],
    );
    const heads: AuditHead[] = [];
    for (const item of items.values()) {
      const seq = Number(item.audit_seq);
      if (seq >= 1 && typeof item.audit_head_hash === 'string')
        heads.push({ batch_id: String(item.batch_id), sequence_number: seq, hash: item.audit_head_hash });
    }
    return heads;
  }

  async anchoredHeads(heads: AuditHead[]): Promise<Set<string>> {
    const items = await batchGetItems(
      heads.map((h) => keys.batchAnchor(h.batch_id, h.sequence_number)),
      ['batch_id', 'head_sequence_number'],
    );
    return new Set([...items.values()].map((item) => `${String(item.batch_id)}#${Number(item.head_sequence_number)}`));
  }

  async clearStaleMarkers(markerIds: string[], at: string): Promise<void> {
    // The marker leaves the pending index (and stays, as IAM allows no delete); conditioned on still being pending, so a replay changes nothing.
    for (let i = 0; i < markerIds.length; i += 25) {
      await Promise.all(
        markerIds.slice(i, i + 25).map(async (id) => {
          try {
            await documentClient().send(
              new UpdateCommand({
                TableName: tableName(),
                Key: keys.anchorMarker(id),
                UpdateExpression: 'SET cleared_at = :at, cleared_as = :why REMOVE GSI2PK, GSI2SK',
                ConditionExpression: 'attribute_exists(GSI2PK)',
                ExpressionAttributeValues: { ':at': at, ':why': 'covered by an anchored head' },
              }),
            );
          } catch (err) {
            if (!isConditionalCheckFailed(err)) throw err;
          }
        }),
      );
    }
  }

  async openAnchor(): Promise<AuditAnchorRecord | null> {
    const state = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.anchorState(), ConsistentRead: true }));
    const id = state.Item?.open_anchor_id;
    return typeof id === 'string' ? this.get(id) : null;
  }

  async open(anchor: AuditAnchorRecord, write: AnchorLedgerTx): Promise<boolean> {
    // The parts first: they are only read through the anchor's META item, which the transaction
    // below writes, so parts left by a failed transaction are unreachable and overwritten by a retry.
    const parts = partsOf(anchor);
    for (const [n, part] of parts.entries()) {
      await documentClient().send(
        new PutCommand({ TableName: tableName(), Item: { ...keys.auditAnchorPart(anchor.anchor_id, n), entity: 'ANCHOR_PART', ...part } }),
      );
    }
    const { heads: _h, marker_ids: _m, ...meta } = anchor;
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: keys.anchorState(),
                UpdateExpression: 'SET open_anchor_id = :id, updated_at = :at',
                ConditionExpression: 'attribute_not_exists(open_anchor_id)',
                ExpressionAttributeValues: { ':id': anchor.anchor_id, ':at': anchor.created_at },
              },
            },
            {
              Put: {
                TableName: tableName(),
                ConditionExpression: 'attribute_not_exists(PK)',
                Item: {
                  ...keys.auditAnchor(anchor.anchor_id),
                  entity: 'ANCHOR',
                  ...meta,
                  head_count: anchor.heads.length,
                  marker_count: anchor.marker_ids.length,
                  part_count: parts.length,
                },
              },
            },
            { Put: { TableName: tableName(), Item: ledgerTxItem(write), ConditionExpression: 'attribute_not_exists(PK)' } },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (isTransactionCanceled(err) && cancellationCodes(err).includes('ConditionalCheckFailed')) return false;
      throw err;
    }
  }

  async get(anchorId: string): Promise<AuditAnchorRecord | null> {
    const items = await queryAll({
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': keys.auditAnchorPartition(anchorId) },
      ConsistentRead: true,
    });
    const meta = items.find((i) => i.SK === 'META');
    if (!meta) return null;
    const parts = items.filter((i) => String(i.SK).startsWith('PART#')).sort((a, b) => String(a.SK).localeCompare(String(b.SK)));
    if (parts.length !== Number(meta.part_count))
      throw new Error(`anchor ${anchorId}: ${parts.length} of its ${String(meta.part_count)} parts found`);
    const { head_count: _c, marker_count: _mc, part_count: _pc, entity: _e, ...rest } = fromItem<Record<string, unknown>>(meta);
    return {
      ...(rest as unknown as Omit<AuditAnchorRecord, 'heads' | 'marker_ids'>),
      heads: parts.flatMap((p) => p.heads as AuditAnchorRecord['heads']),
      marker_ids: parts.flatMap((p) => p.marker_ids as string[]),
    };
  }

  async finish(
    anchor: AuditAnchorRecord,
    batchAnchors: Array<BatchAnchor & { batch_id: string }>,
    mined: { tx_hash: string; block_number: number },
    at: string,
  ): Promise<void> {
    const writes: TransactItem[] = [
      ...batchAnchors.map(
        (a): TransactItem => ({
          Put: {
            TableName: tableName(),
            Item: { ...keys.batchAnchor(a.batch_id, a.head_sequence_number), entity: 'BATCH_ANCHOR', ...a, anchored_at: at },
          },
        }),
      ),
      // The marker leaves the pending index (and stays, as IAM allows no delete).
      ...anchor.marker_ids.map(
        (id): TransactItem => ({
          Update: {
            TableName: tableName(),
            Key: keys.anchorMarker(id),
            UpdateExpression: 'SET anchor_id = :a REMOVE GSI2PK, GSI2SK',
            ExpressionAttributeValues: { ':a': anchor.anchor_id },
          },
        }),
      ),
    ];
    for (let i = 0; i < writes.length; i += TRANSACTION_ITEMS) {
      await documentClient().send(new TransactWriteCommand({ TransactItems: writes.slice(i, i + TRANSACTION_ITEMS) }));
    }
    await conditionalUpdate({
      Key: keys.auditAnchor(anchor.anchor_id),
      UpdateExpression: 'SET #s = :s, tx_hash = :h, block_number = :b, anchored_at = :at',
      ConditionExpression: '#s = :open',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':s': 'ANCHORED', ':open': 'OPEN', ':h': mined.tx_hash, ':b': mined.block_number, ':at': at },
    });
    await this.close(anchor.anchor_id, at);
  }

  async abandon(anchorId: string, reason: string, at: string): Promise<void> {
    await conditionalUpdate({
      Key: keys.auditAnchor(anchorId),
      UpdateExpression: 'SET #s = :s, failure = :f, failed_at = :at',
      ConditionExpression: '#s = :open',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':s': 'FAILED', ':open': 'OPEN', ':f': reason.slice(0, 1000), ':at': at },
    });
    await this.close(anchorId, at);
  }

  async ofBatch(batchId: string): Promise<BatchAnchor[]> {
    const items = await queryAll({
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': keys.batchAnchorsPartition(batchId) },
    });
    return items.map((item) => {
      const {
        entity: _e,
        batch_id: _b,
        anchored_at: _at,
        ...a
      } = fromItem<BatchAnchor & { entity: string; batch_id: string; anchored_at: string }>(item);
      return a;
    });
  }

  /**
   * Backfill after an upgrade (docs/upgrading.md#upgrading-a-stack-deployed-before-periodic-anchors): scans
   * the table for batches with audit entries and puts a pending-anchor marker for each batch's head
   * unless one exists, so the next anchor covers entries written before anchoring existed.
   * `progress` is called after each scanned page. Returns the batches seen and markers written.
   */
  async backfillMarkers(
    at: string,
    progress?: (p: { scanned: number; marked: number }) => void,
  ): Promise<{ scanned: number; marked: number }> {
    let scanned = 0;
    let marked = 0;
    const pages = paginateScan(
      { client: documentClient() },
      {
        TableName: tableName(),
        FilterExpression: 'SK = :meta AND begins_with(PK, :batch) AND audit_seq > :zero',
        ExpressionAttributeValues: { ':meta': 'META', ':batch': 'BATCH#', ':zero': 0 },
        ProjectionExpression: 'batch_id, audit_seq',
      },
    );
    for await (const r of pages) {
      for (const item of r.Items ?? []) {
        scanned++;
        const id = `${String(item.batch_id)}#${Number(item.audit_seq)}`;
        const put = anchorMarkerPut(id, [String(item.batch_id)], at).Put!;
        try {
          await documentClient().send(
            new PutCommand({ TableName: put.TableName, Item: put.Item, ConditionExpression: 'attribute_not_exists(PK)' }),
          );
          marked++;
        } catch (err) {
          if (!isConditionalCheckFailed(err)) throw err;
        }
      }
      progress?.({ scanned, marked });
    }
    return { scanned, marked };
  }

  /** The anchor is no longer the open one (no-op when another is, or none). */
  private async close(anchorId: string, at: string): Promise<void> {
    await conditionalUpdate({
      Key: keys.anchorState(),
      UpdateExpression: 'REMOVE open_anchor_id SET updated_at = :at',
      ConditionExpression: 'open_anchor_id = :id',
      ExpressionAttributeValues: { ':id': anchorId, ':at': at },
    });
  }
}

function partsOf(anchor: AuditAnchorRecord): Array<{ heads: AuditAnchorRecord['heads']; marker_ids: string[] }> {
  const n = Math.max(1, Math.ceil(anchor.heads.length / PART_SIZE), Math.ceil(anchor.marker_ids.length / PART_SIZE));
  return Array.from({ length: n }, (_, i) => ({
    heads: anchor.heads.slice(i * PART_SIZE, (i + 1) * PART_SIZE),
    marker_ids: anchor.marker_ids.slice(i * PART_SIZE, (i + 1) * PART_SIZE),
  }));
}

/** Every item of a query on the table, all pages (the SDK's paginator). */
async function queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  for await (const page of paginateQuery({ client: documentClient() }, { TableName: tableName(), ...input }))
    items.push(...(page.Items ?? []));
  return items;
}
