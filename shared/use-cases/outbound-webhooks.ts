/**
 * Outbound webhooks (docs/api/outbound-webhooks.md#outbound-webhooks): endpoint management, the fan-out of the table's changes into
 * deliveries, and one delivery attempt per queue message with the Standard Webhooks retry schedule.
 *
 * Delivery is at least once: the fan-out creates one delivery per (endpoint, event) (idempotent,
 * so a change seen twice is delivered once) and queues a message; each message carries the
 * delivery's `pending_token`, and only the message holding the current token makes an attempt.
 * After a failed attempt the next message is queued first, then the delivery updated (so no
 * retry is lost); SQS waits at most 900 s, so a longer wait is made of hops: a message that
 * arrives before `next_attempt_at` queues itself again for the rest.
 */
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import type { WorkQueue } from '../domain/ports/messaging';
import { countOutboundDeliveryFailure } from '../runtime/metrics';
import {
  assertManagesEndpoint,
  endpointOwnerOf,
  endpointReceives,
  hasPlaintextSecret,
  outboundEventBody,
  outboundEventsOfChange,
  ownerKey,
  ownersOf,
  previousSecretSigns,
  retryDelaySeconds,
  SECRET_ROTATION_OVERLAP_MS,
  signingSecrets,
  subscribableEvents,
  type EndpointUrlGuard,
  type ItemImage,
  type OutboundDelivery,
  type OutboundDeliveryMessage,
  type OutboundEndpoint,
  type OutboundEventType,
  type OutboundSender,
  type OutboundWebhookStore,
  type Page,
  type RevealedEndpoint,
} from '../domain/outbound-webhooks';
import type { SealedSecret, SecretSealer } from '../domain/secret-sealing';

/** Longest SQS DelaySeconds. */
const MAX_QUEUE_DELAY_S = 900;

export interface OutboundWebhookDeps {
  store: OutboundWebhookStore;
  queue: WorkQueue<OutboundDeliveryMessage>;
  now: () => Date;
  /** `whe_<ULID>`-style ids and tokens. */
  newId: (prefix: string) => string;
  /** A fresh `whsec_…` secret. */
  newSecret: () => string;
  /**
   * Seals signing secrets before they are stored and opens them to sign (context: the endpoint
   * id). Built on first use, so routes that never seal or open need no key.
   */
  sealer: SecretSealer;
}

export interface EndpointDeps extends Pick<OutboundWebhookDeps, 'store' | 'now' | 'newId' | 'newSecret' | 'sealer'> {
  guard: EndpointUrlGuard;
}

function notFound(what: string): DomainError {
  return new DomainError('ROUTE_NOT_FOUND', `No ${what}.`);
}

/**
 * Registers an endpoint for `caller` (ADMIN, a cooperative MANAGER, an MFI). Returns the endpoint
 * with its secret (shown only in this answer). Errors: 403 for other callers; 400
 * VALIDATION_ERROR when an event is not one the owner may subscribe to, or the URL is refused
 * (in AWS: not https, or resolving to a private, loopback, link-local or metadata address).
 */
export async function registerEndpoint(
  deps: EndpointDeps,
  caller: Caller,
  input: { url: string; events: OutboundEventType[]; description?: string },
): Promise<RevealedEndpoint> {
  const owner = endpointOwnerOf(caller);
  const allowed = subscribableEvents(owner);
  const details = input.events.flatMap((e, i) =>
    allowed.includes(e)
      ? []
      : [{ path: `events[${i}]`, message: `${e} is not an event ${owner.kind} endpoints receive (allowed: ${allowed.join(', ')})` }],
  );
  const refusal = await deps.guard.refusal(input.url);
  if (refusal) details.push({ path: 'url', message: refusal });
  if (details.length)
    throw new DomainError('VALIDATION_ERROR', `Invalid webhook endpoint: ${details[0]!.path} ${details[0]!.message}`, { details });
  const at = deps.now().toISOString();
  const endpointId = deps.newId('whe_');
  const secret = deps.newSecret();
  const endpoint: OutboundEndpoint = {
    endpoint_id: endpointId,
    owner,
    url: input.url,
    events: [...new Set(input.events)],
    ...(input.description ? { description: input.description } : {}),
    status: 'ACTIVE',
    sealed_secret: await deps.sealer.seal(secret, endpointId),
    created_at: at,
    created_by: caller.sub,
    updated_at: at,
  };
  await deps.store.createEndpoint(endpoint);
  return { ...endpoint, secret };
}

/** The caller's own endpoints (ACTIVE and DISABLED). Errors: 403 for callers who own none. */
export async function listEndpoints(deps: Pick<OutboundWebhookDeps, 'store'>, caller: Caller): Promise<OutboundEndpoint[]> {
  return deps.store.listEndpoints(ownerKey(endpointOwnerOf(caller)));
}

/** An endpoint the caller manages. Errors: 404 ROUTE_NOT_FOUND (unknown or deleted), 403 (another owner's). */
async function managedEndpoint(deps: Pick<OutboundWebhookDeps, 'store'>, caller: Caller, id: string): Promise<OutboundEndpoint> {
  endpointOwnerOf(caller);
  const e = await deps.store.getEndpoint(id);
  if (!e || e.status === 'DELETED') throw notFound(`webhook endpoint ${id}`);
  assertManagesEndpoint(caller, e);
  return e;
}

/** Deletes an endpoint (kept as DELETED: its pending deliveries end DEAD). Errors: as managedEndpoint. */
export async function deleteEndpoint(deps: Pick<OutboundWebhookDeps, 'store' | 'now'>, caller: Caller, id: string): Promise<void> {
  await managedEndpoint(deps, caller, id);
  if (!(await deps.store.updateEndpoint(id, { status: 'DELETED' }, deps.now().toISOString()))) throw notFound(`webhook endpoint ${id}`);
}

/**
 * A new secret for the endpoint; the one it replaces keeps signing for 24 h (both signatures are
 * sent). Both are stored sealed: the current sealed secret becomes the previous one as it is (a
 * plaintext secret of an endpoint registered before sealing is sealed now and removed), so a
 * rotation only seals, never opens. Returns the endpoint with the new secret (shown only in this
 * answer). Errors: as managedEndpoint.
 */
export async function rotateSecret(
  deps: Pick<OutboundWebhookDeps, 'store' | 'now' | 'newSecret' | 'sealer'>,
  caller: Caller,
  id: string,
): Promise<RevealedEndpoint> {
  const e = await managedEndpoint(deps, caller, id);
  const now = deps.now();
  const secret = deps.newSecret();
  const previous: SealedSecret | undefined = e.sealed_secret ?? (e.secret !== undefined ? await deps.sealer.seal(e.secret, id) : undefined);
  const set = {
    sealed_secret: await deps.sealer.seal(secret, id),
    previous_sealed_secret: previous,
    previous_secret_expires_at: new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS).toISOString(),
    secret: undefined,
    previous_secret: undefined,
  };
  if (!(await deps.store.updateEndpoint(id, set, now.toISOString()))) throw notFound(`webhook endpoint ${id}`);
  const { secret: _plain, previous_secret: _prev, ...rest } = e;
  return {
    ...rest,
    sealed_secret: set.sealed_secret,
    previous_sealed_secret: previous,
    previous_secret_expires_at: set.previous_secret_expires_at,
    secret,
    updated_at: now.toISOString(),
  };
}

/**
 * The plaintext secrets that sign for `e` at `now`, opened with the sealer (the previous one only
 * during its overlap). An endpoint registered before secrets were sealed still holds plaintext:
 * those are sealed and stored now, the plaintext removed (only while the stored plaintext is
 * unchanged, so a concurrent rotation wins). Errors: the sealer's (key unavailable, wrong context).
 */
export async function openSigningSecrets(
  deps: Pick<OutboundWebhookDeps, 'store' | 'sealer'>,
  e: OutboundEndpoint,
  now: Date,
): Promise<string[]> {
  const id = e.endpoint_id;
  if (hasPlaintextSecret(e) && e.secret !== undefined) {
    const set = {
      sealed_secret: e.sealed_secret ?? (await deps.sealer.seal(e.secret, id)),
      ...(e.previous_secret !== undefined && !e.previous_sealed_secret
        ? { previous_sealed_secret: await deps.sealer.seal(e.previous_secret, id) }
        : {}),
      secret: undefined,
      previous_secret: undefined,
    };
    await deps.store.updateEndpoint(id, set, now.toISOString(), e.secret);
  }
  const current = e.secret ?? (e.sealed_secret ? await deps.sealer.open(e.sealed_secret, id) : undefined);
  if (current === undefined) throw new Error(`Webhook endpoint ${id} has no signing secret`);
  const previous = previousSecretSigns(e, now)
    ? (e.previous_secret ?? (e.previous_sealed_secret ? await deps.sealer.open(e.previous_sealed_secret, id) : undefined))
    : undefined;
  return signingSecrets({ secret: current, previous_secret: previous, previous_secret_expires_at: e.previous_secret_expires_at }, now);
}

/** The endpoint's delivery log, newest first. Errors: as managedEndpoint. */
export async function listDeliveries(
  deps: Pick<OutboundWebhookDeps, 'store'>,
  caller: Caller,
  id: string,
  q: { limit: number; next_token?: string },
): Promise<Page<OutboundDelivery>> {
  await managedEndpoint(deps, caller, id);
  return deps.store.listDeliveries(id, q.limit, q.next_token);
}

/**
 * Sends a delivery again from the start of the retry schedule (same event id and body), whatever
 * its state. Errors: 404 ROUTE_NOT_FOUND (unknown delivery, or its endpoint deleted), 403 (another
 * owner's); 400 VALIDATION_ERROR when its endpoint is disabled.
 */
export async function replayDelivery(deps: OutboundWebhookDeps, caller: Caller, deliveryId: string): Promise<OutboundDelivery> {
  endpointOwnerOf(caller);
  const d = await deps.store.getDelivery(deliveryId);
  if (!d) throw notFound(`webhook delivery ${deliveryId}`);
  const e = await managedEndpoint(deps, caller, d.endpoint_id);
  if (e.status !== 'ACTIVE')
    throw new DomainError(
      'VALIDATION_ERROR',
      `Webhook endpoint ${e.endpoint_id} is ${e.status}${e.disabled_reason ? ` (${e.disabled_reason})` : ''}; register it again to receive deliveries.`,
    );
  const at = deps.now().toISOString();
  const token = deps.newId('tok_');
  const set: Partial<OutboundDelivery> = { state: 'PENDING', round_attempts: 0, pending_token: token, next_attempt_at: at, updated_at: at };
  if (!(await deps.store.updateDelivery(d.delivery_id, d.pending_token ?? '', set))) {
    // Another attempt moved it on meanwhile: replay from its new state.
    return replayDelivery(deps, caller, deliveryId);
  }
  // Queued after the update, so the message finds its token; should queuing fail, the request
  // fails and replaying again re-queues (a replay works from any state).
  await deps.queue.send({ delivery_id: d.delivery_id, token });
  return { ...d, ...set };
}

/**
 * The endpoints of each owner (`ownerKey`, or ALL_MFIS for every MFI's) as listed once for one
 * batch of changes: a stream batch's changes mostly concern the same few owners (ADMIN, the
 * cooperative), so each owner's endpoints are read once per batch instead of once per event.
 */
export type EndpointListings = Map<string, Promise<OutboundEndpoint[]>>;

/** The key of every MFI's endpoints in {@link EndpointListings}. */
const ALL_MFIS = '#all-mfis';

/**
 * The fan-out: the events of each item change (old and new images), one delivery per subscribed
 * endpoint that receives it, each queued. Idempotent (a change seen again re-queues only
 * deliveries still PENDING at their first attempt, the at-least-once case). Returns the number of
 * deliveries created. `listings`: endpoint lists already read for this batch of changes (the
 * stream consumer passes one map per invocation); each owner's list is read once into it. Errors:
 * store or queue failures propagate (the stream batch is retried; a failed listing is not kept).
 */
export async function publishChanges(
  deps: OutboundWebhookDeps,
  changes: Array<{ oldImage?: ItemImage; newImage?: ItemImage }>,
  listings: EndpointListings = new Map(),
): Promise<number> {
  const listed = (key: string, list: () => Promise<OutboundEndpoint[]>) => {
    let l = listings.get(key);
    if (!l) {
      l = list();
      listings.set(key, l);
      l.catch(() => listings.delete(key));
    }
    return l;
  };
  let created = 0;
  for (const change of changes) {
    for (const event of outboundEventsOfChange(change.oldImage, change.newImage)) {
      const { owners, allMfis } = ownersOf(event);
      const lists = await Promise.all([
        ...owners.map((o) => listed(o, () => deps.store.listEndpoints(o))),
        ...(allMfis ? [listed(ALL_MFIS, () => deps.store.listMfiEndpoints())] : []),
      ]);
      const endpoints = new Map(lists.flat().map((e) => [e.endpoint_id, e]));
      for (const endpoint of endpoints.values()) {
        if (!endpointReceives(endpoint, event)) continue;
        const at = deps.now().toISOString();
        const { delivery, created: isNew } = await deps.store.ensureDelivery(endpoint.endpoint_id, event, deps.newId('tok_'), at);
        if (isNew) created++;
        if (delivery.state === 'PENDING' && delivery.round_attempts === 0 && delivery.pending_token)
          await deps.queue.send({ delivery_id: delivery.delivery_id, token: delivery.pending_token });
      }
    }
  }
  return created;
}

/**
 * One queue message: makes the delivery's next attempt if the message holds its current token and
 * the attempt is due (else queues a hop for the rest of the wait). 2xx → DELIVERED; 410 → DEAD and
 * the endpoint DISABLED; other answers and transport errors → FAILED with the next attempt
 * scheduled (`retryDelaySeconds × timeScale`), or DEAD once the schedule is exhausted. A deleted
 * or disabled endpoint ends the delivery DEAD. Returns the delivery's new state, or null when the
 * message was stale.
 */
export async function attemptDelivery(
  deps: OutboundWebhookDeps & { sender: OutboundSender; timeScale: number },
  msg: OutboundDeliveryMessage,
): Promise<OutboundDelivery['state'] | null> {
  const d = await deps.store.getDelivery(msg.delivery_id);
  if (!d || d.pending_token !== msg.token || d.state === 'DELIVERED' || d.state === 'DEAD') return null;
  const now = deps.now();
  const dueIn = d.next_attempt_at ? Date.parse(d.next_attempt_at) - now.getTime() : 0;
  if (dueIn > 1000) {
    await deps.queue.send(msg, { delaySeconds: Math.min(MAX_QUEUE_DELAY_S, Math.ceil(dueIn / 1000)) });
    return d.state;
  }
  const endpoint = await deps.store.getEndpoint(d.endpoint_id);
  const at = now.toISOString();
  if (endpoint?.status !== 'ACTIVE') {
    const ok = await deps.store.updateDelivery(d.delivery_id, msg.token, {
      state: 'DEAD',
      last_error: `endpoint ${endpoint?.status ?? 'DELETED'}`,
      pending_token: undefined,
      next_attempt_at: undefined,
      updated_at: at,
    });
    return ok ? 'DEAD' : null;
  }
  const secrets = await openSigningSecrets(deps, endpoint, now);
  const result = await deps.sender.send({
    url: endpoint.url,
    secrets,
    eventId: d.event.event_id,
    body: outboundEventBody(d.event),
    at: now,
  });
  const attempts = d.attempts + 1;
  const round = d.round_attempts + 1;
  const common: Partial<OutboundDelivery> = {
    attempts,
    round_attempts: round,
    last_attempt_at: at,
    last_status_code: result.status_code,
    last_error: result.error,
    updated_at: at,
  };
  /** Ends the delivery in `state` (no next attempt); null when another attempt took it over meanwhile. */
  const close = async <S extends 'DELIVERED' | 'DEAD'>(state: S): Promise<S | null> =>
    (await deps.store.updateDelivery(d.delivery_id, msg.token, { ...common, state, pending_token: undefined, next_attempt_at: undefined }))
      ? state
      : null;
  const code = result.status_code ?? 0;
  if (code < 200 || code >= 300)
    countOutboundDeliveryFailure(
      code === 410
        ? 'GONE'
        : code
          ? `HTTP_${code}`
          : /refused/.test(result.error ?? '')
            ? 'BLOCKED_ADDRESS'
            : /TIMEDOUT|timeout/i.test(result.error ?? '')
              ? 'TIMEOUT'
              : 'CONNECTION',
    );
  if (code >= 200 && code < 300) {
    return close('DELIVERED');
  }
  if (code === 410) {
    await deps.store.updateEndpoint(
      endpoint.endpoint_id,
      { status: 'DISABLED', disabled_reason: `the receiver answered 410 Gone at ${at}` },
      at,
    );
    return close('DEAD');
  }
  const delay = retryDelaySeconds(round, deps.timeScale);
  if (delay === null) {
    return close('DEAD');
  }
  const token = deps.newId('tok_');
  const next = new Date(now.getTime() + delay * 1000).toISOString();
  await deps.queue.send({ delivery_id: d.delivery_id, token }, { delaySeconds: Math.min(MAX_QUEUE_DELAY_S, Math.ceil(delay)) });
  const ok = await deps.store.updateDelivery(d.delivery_id, msg.token, {
    ...common,
    state: 'FAILED',
    pending_token: token,
    next_attempt_at: next,
  });
  return ok ? 'FAILED' : null;
}
