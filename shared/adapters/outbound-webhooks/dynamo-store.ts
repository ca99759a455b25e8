import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OutboundDelivery, OutboundEndpoint, OutboundEvent, OutboundWebhookStore, Page } from '../../domain/outbound-webhooks';
import { ownerKey } from '../../domain/outbound-webhooks';
import { fromItem, META } from '../dynamodb/keys';
import { decodePageToken, encodePageToken, type GsiPageKey } from '../dynamodb/page-token';
import { documentClient, isConditionalCheckFailed, tableName } from '../dynamodb/table';

/**
 * Outbound webhook endpoints and deliveries in the single table:
 *
 * | Entity            | PK                          | SK   | GSI1PK                          | GSI1SK                     | GSI2PK (sparse)      |
 * |-------------------|-----------------------------|------|---------------------------------|----------------------------|----------------------|
 * | Endpoint          | OWH_ENDPOINT#<endpoint_id>  | META | OWH_OWNER#<owner key>           | <created_at>#<endpoint_id> | OWH_MFI_ENDPOINTS (MFI endpoints) |
 * | Delivery          | OWH_DELIVERY#<delivery_id>  | META | OWH_DELIVERIES#<endpoint_id>    | <created_at>#<delivery_id> |                      |
 *
 * A deleted endpoint stays as DELETED with its index keys removed (the table's IAM allows deletes
 * only of never-sent payouts). The delivery id is derived from (endpoint, event), and the
 * delivery put with attribute_not_exists, so a change seen twice makes one delivery. Every
 * delivery update is conditional on its `pending_token`. Signing secrets are stored sealed
 * (`sealed_secret`, `previous_sealed_secret`: envelope-encrypted by the use cases through the
 * SecretSealer port), never in plaintext; nothing here logs an item.
 */
const endpointKey = (id: string) => ({ PK: `OWH_ENDPOINT#${id}`, SK: META });
const deliveryKey = (id: string) => ({ PK: `OWH_DELIVERY#${id}`, SK: META });
/** The keys of outbound webhook endpoints and deliveries (the IAM template tests check writers may write them). */
export const outboundWebhookKeys = { endpoint: endpointKey, delivery: deliveryKey };
const MFI_ENDPOINTS = 'OWH_MFI_ENDPOINTS';

/** `whd_` + 26 base32 characters of sha256(endpoint id, event id). */
function deliveryIdOf(endpointId: string, eventId: string): string {
  const digest = createHash('sha256').update(`${endpointId}\n${eventId}`).digest();
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let bits = 0n;
  for (const b of digest.subarray(0, 17)) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < 26; i++) out += alphabet[Number((bits >> BigInt(5 * i)) & 31n)];
  return `whd_${out}`;
}

/**
 * The start key in a delivery-log token, only when it is one this endpoint's listing issued: the
 * endpoint's own GSI1PK, a delivery's table key (`OWH_DELIVERY#whd_…`, META) and a GSI1SK ending
 * in that delivery id. Errors: 400 VALIDATION_ERROR for a garbled, forged or another endpoint's token.
 */
function decodeDeliveriesToken(token: string, endpointId: string): GsiPageKey {
  return decodePageToken(token, `OWH_DELIVERIES#${endpointId}`, (k) => {
    const m = /^OWH_DELIVERY#(whd_[0-9A-Z]{26})$/.exec(k.PK);
    return !!m && k.SK === META && k.GSI1SK.endsWith(`#${m[1]}`);
  });
}

export class DynamoOutboundWebhookStore implements OutboundWebhookStore {
  async createEndpoint(e: OutboundEndpoint): Promise<void> {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...endpointKey(e.endpoint_id),
          entity: 'OWH_ENDPOINT',
          GSI1PK: `OWH_OWNER#${ownerKey(e.owner)}`,
          GSI1SK: `${e.created_at}#${e.endpoint_id}`,
          ...(e.owner.kind === 'MFI' ? { GSI2PK: MFI_ENDPOINTS, GSI2SK: e.endpoint_id } : {}),
          ...e,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async getEndpoint(id: string): Promise<OutboundEndpoint | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: endpointKey(id), ConsistentRead: true }));
    return r.Item && r.Item.entity === 'OWH_ENDPOINT' ? fromItem<OutboundEndpoint>(r.Item) : null;
  }

  private async queryAll(index: 'GSI1' | 'GSI2', pk: string): Promise<OutboundEndpoint[]> {
    const out: OutboundEndpoint[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: index,
          KeyConditionExpression: `${index}PK = :pk`,
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of r.Items ?? [])
        if (item.entity === 'OWH_ENDPOINT' && item.status !== 'DELETED') out.push(fromItem<OutboundEndpoint>(item));
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }

  listEndpoints(owner: string): Promise<OutboundEndpoint[]> {
    return this.queryAll('GSI1', `OWH_OWNER#${owner}`);
  }

  async listMfiEndpoints(): Promise<OutboundEndpoint[]> {
    return (await this.queryAll('GSI2', MFI_ENDPOINTS)).filter((e) => e.status === 'ACTIVE');
  }

  async updateEndpoint(id: string, set: Partial<OutboundEndpoint>, at: string, whilePlaintext?: string): Promise<boolean> {
    const names: Record<string, string> = { '#status': 'status', '#updated_at': 'updated_at' };
    const values: Record<string, unknown> = { ':deleted': 'DELETED', ':at': at };
    const sets = ['#updated_at = :at'];
    const removes: string[] = [];
    Object.entries(set).forEach(([field, value], i) => {
      names[`#f${i}`] = field;
      if (value === undefined) removes.push(`#f${i}`);
      else {
        values[`:f${i}`] = value;
        sets.push(`#f${i} = :f${i}`);
      }
    });
    let condition = 'attribute_exists(PK) AND #status <> :deleted';
    if (whilePlaintext !== undefined) {
      names['#secret'] = 'secret';
      values[':plain'] = whilePlaintext;
      condition += ' AND #secret = :plain';
    }
    // A deleted endpoint leaves the indexes (no listing, no fan-out).
    if (set.status === 'DELETED') removes.push('GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK');
    const remove = removes.length ? ` REMOVE ${removes.join(', ')}` : '';
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: endpointKey(id),
          UpdateExpression: `SET ${sets.join(', ')}${remove}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async ensureDelivery(
    endpointId: string,
    event: OutboundEvent,
    token: string,
    at: string,
  ): Promise<{ delivery: OutboundDelivery; created: boolean }> {
    const delivery: OutboundDelivery = {
      delivery_id: deliveryIdOf(endpointId, event.event_id),
      endpoint_id: endpointId,
      event,
      state: 'PENDING',
      attempts: 0,
      round_attempts: 0,
      next_attempt_at: at,
      pending_token: token,
      created_at: at,
      updated_at: at,
    };
    try {
      await documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...deliveryKey(delivery.delivery_id),
            entity: 'OWH_DELIVERY',
            GSI1PK: `OWH_DELIVERIES#${endpointId}`,
            GSI1SK: `${at}#${delivery.delivery_id}`,
            ...delivery,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return { delivery, created: true };
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      const existing = await this.getDelivery(delivery.delivery_id);
      if (!existing) throw err;
      return { delivery: existing, created: false };
    }
  }

  async getDelivery(id: string): Promise<OutboundDelivery | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: deliveryKey(id), ConsistentRead: true }));
    return r.Item && r.Item.entity === 'OWH_DELIVERY' ? fromItem<OutboundDelivery>(r.Item) : null;
  }

  async listDeliveries(endpointId: string, limit: number, nextToken?: string): Promise<Page<OutboundDelivery>> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': `OWH_DELIVERIES#${endpointId}` },
        ScanIndexForward: false,
        Limit: limit,
        ExclusiveStartKey: nextToken ? decodeDeliveriesToken(nextToken, endpointId) : undefined,
      }),
    );
    const items = (r.Items ?? []).filter((i) => i.entity === 'OWH_DELIVERY').map((i) => fromItem<OutboundDelivery>(i));
    const next = encodePageToken(r.LastEvaluatedKey);
    return { items, ...(next ? { next_token: next } : {}) };
  }

  async updateDelivery(id: string, token: string, set: Partial<OutboundDelivery>): Promise<boolean> {
    const names: Record<string, string> = { '#token': 'pending_token' };
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const removes: string[] = [];
    Object.entries(set).forEach(([field, value], i) => {
      if (field === 'delivery_id' || field === 'endpoint_id' || field === 'event') return;
      names[`#f${i}`] = field;
      if (value === undefined) removes.push(`#f${i}`);
      else {
        values[`:f${i}`] = value;
        sets.push(`#f${i} = :f${i}`);
      }
    });
    const condition = token === '' ? 'attribute_exists(PK) AND attribute_not_exists(#token)' : '#token = :token';
    if (token !== '') values[':token'] = token;
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: deliveryKey(id),
          UpdateExpression: `${sets.length ? `SET ${sets.join(', ')}` : ''}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}
