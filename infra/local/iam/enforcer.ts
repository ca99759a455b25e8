/**
 * IAM enforcement for the local stack (docs/local-iam.md). Dev-only: never imported by functions/
 * or shared/, and @cloud-copilot/iam-simulate (AGPL) is a dev dependency that no bundle contains.
 *
 * Every handler, queue consumer, state-machine task, stream consumer and scheduled worker runs
 * inside {@link IamEnforcer.wrap}, so an AsyncLocalStorage knows which function makes each AWS call:
 * - SDK calls (DynamoDB incl. every item of a transaction or batch, SQS, SNS, Step Functions,
 *   KMS, Secrets Manager) are seen by wrapping the shared smithy `Client.prototype.send`
 *   ({@link IamEnforcer.instrument});
 * - S3 calls of the signed-fetch adapters are seen by wrapping `globalThis.fetch` for requests to
 *   the local S3 endpoint ({@link IamEnforcer.instrumentFetch}).
 * Each call becomes IAM requests (action, resource ARN, context such as `dynamodb:LeadingKeys` or
 * `s3:prefix`) evaluated with `runSimulation` against that function's role policies from the
 * synthesized template (infra/tools/iam/role-policies.ts). A refused call fails as AWS fails it: the SDK call
 * rejects with the client's own service exception named `AccessDeniedException` (HTTP 403), an S3
 * request answers 403 with the `AccessDenied` XML body, and a GET of a missing object answers 403
 * instead of 404 when the role may not list that key (as S3 does). Calls made outside any handler
 * (the stack's setup, the pollers standing in for event sources) are not evaluated; a handler whose
 * function has no role in the template is refused everything.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import type { NamedPolicy, PolicyDocument } from '../../tools/iam/role-policies';
import { evaluate, globMatch } from '../../tools/iam/simulate';

/** One IAM request: what AWS authorises for (part of) a call. */
export interface IamRequest {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
}

/** The decision on one request, and the statement that made it. */
export interface IamDecision {
  allowed: boolean;
  /** `<policy> statement <Sid or #index> (<Effect>)`, or `no statement allows it`. */
  decidedBy: string;
}

/**
 * A refusal the enforcement knows about and lets through (logged as such): a temporary allow-list
 * for a permission whose fix is on its way. Globs use `*` and `?`.
 */
export interface KnownRefusal {
  fn: string;
  action: string;
  /** Glob on the resource ARN (default any). */
  resource?: string;
  /** Glob every `dynamodb:LeadingKeys` value must match (default any). */
  leadingKey?: string;
  why: string;
}

export interface IamEnforcerOptions {
  /** Function folder → its role's identity policies, resolved to local ARNs. */
  policies: Record<string, NamedPolicy[]>;
  region: string;
  account: string;
  /** The stack's log function (refusals also go to stderr). */
  log: (line: string) => void;
  /** Append every evaluated request as `{"fn","action","resource","allowed"}` (one JSON line, deduplicated). */
  decisionsFile?: string;
  knownRefusals?: KnownRefusal[];
  /** DynamoDB partition key attribute of each table name, and of each of its indexes. */
  dynamoKeys: Record<string, { partitionKey: string; indexes: Record<string, string> }>;
  /** Local queue URL → ARN. */
  queueArnOf(url: string): string;
  /** The local stand-in topic for SMS: publishing to it is evaluated as AWS evaluates a direct SMS (no topic). */
  smsStandInTopicArn?: string;
  /** The one local state machine (task-token callbacks are authorised on it). */
  stateMachineArn?: string;
  /** Origin (`http://host:port`) of the local S3 endpoint; requests to it from a handler are evaluated. */
  s3Origin?: string;
}

/** A service exception class of an SDK client (`DynamoDBServiceException`, …). */
export type ServiceExceptionClass = new (o: {
  name: string;
  $fault: 'client' | 'server';
  $metadata: Record<string, unknown>;
  message: string;
}) => Error;

type Command = { constructor: { name: string }; input?: Record<string, unknown> };
type Send = (this: { config?: { serviceId?: string } }, command: Command, ...rest: unknown[]) => unknown;

const DOC_COMMANDS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactGet: 'TransactGetItems',
  TransactWrite: 'TransactWriteItems',
};
/** Context keys whose policy conditions (string or Null operators only) let a decision be cached per pattern match. */
const CACHEABLE_OPERATORS = /^(ForAnyValue:|ForAllValues:)?(StringLike|StringNotLike|StringEquals|StringNotEquals)(IfExists)?$|^Null$/;

export class IamEnforcer {
  private readonly als = new AsyncLocalStorage<string>();
  private readonly cache = new Map<string, Promise<IamDecision>>();
  private readonly written = new Set<string>();
  private readonly shapes = new Map<string, PolicyShape>();
  /** Requests evaluated by the simulator (cache misses) and served from the cache. */
  readonly stats = { simulated: 0, cached: 0, refused: 0 };

  constructor(private readonly opts: IamEnforcerOptions) {
    for (const [fn, ps] of Object.entries(opts.policies)) this.shapes.set(fn, policyShape(ps.map((p) => p.policy)));
  }

  /** `handler` run as function `fn`: every AWS call it makes is evaluated against `fn`'s role. */
  wrap<A extends unknown[], R>(fn: string, handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args: A) => this.als.run(fn, () => handler(...args));
  }

  /** The function whose handler is running, if any. */
  current(): string | undefined {
    return this.als.getStore();
  }

  /**
   * Decides `requests` of one call by `fn`: allowed only if every request is (a transaction or
   * batch is refused as a whole). Logs each refusal; known refusals are logged and let through.
   * @returns undefined when allowed, else the refusal's message.
   */
  async check(fn: string, requests: IamRequest[]): Promise<string | undefined> {
    for (const r of requests) {
      const d = await this.decide(fn, r);
      this.record(fn, r, d.allowed);
      if (d.allowed) continue;
      const where = `function ${fn}: ${r.action} on ${r.resource}${Object.keys(r.context).length ? ` ${JSON.stringify(r.context)}` : ''}; decided by ${d.decidedBy}`;
      const known = this.opts.knownRefusals?.find(
        (k) =>
          k.fn === fn &&
          k.action === r.action &&
          (!k.resource || globMatch(k.resource, r.resource)) &&
          (!k.leadingKey || ([] as string[]).concat(r.context['dynamodb:LeadingKeys'] ?? []).every((v) => globMatch(k.leadingKey!, v))),
      );
      if (known) {
        this.say(`IAM refusal let through (known, LOCAL_IAM_KNOWN_REFUSALS: ${known.why}): ${where}`);
        continue;
      }
      this.stats.refused++;
      this.say(`IAM refused: ${where}`);
      return `User: arn:aws:sts::${this.opts.account}:assumed-role/coffee-trace-${fn}/${fn} is not authorized to perform: ${r.action} on resource: ${r.resource} (local IAM enforcement, function ${fn}: ${d.decidedBy === 'no statement allows it' ? 'no identity-based policy allows it' : `explicit deny in ${d.decidedBy}`})`;
    }
    return undefined;
  }

  /** The decision on one request (cached per function, action and the request's match against the role's patterns). */
  decide(fn: string, r: IamRequest): Promise<IamDecision> {
    const shape = this.shapes.get(fn);
    if (!shape) return Promise.resolve({ allowed: false, decidedBy: `no role: function ${fn} has no role in the synthesized template` });
    const key = cacheKey(fn, r, shape);
    const hit = this.cache.get(key);
    if (hit) {
      this.stats.cached++;
      return hit;
    }
    this.stats.simulated++;
    const d = this.simulate(fn, r);
    this.cache.set(key, d);
    return d;
  }

  private async simulate(fn: string, r: IamRequest): Promise<IamDecision> {
    const policies = this.opts.policies[fn]!;
    const principal = `arn:aws:iam::${this.opts.account}:role/coffee-trace-${fn}`;
    const d = await evaluate(policies, r, principal, this.opts.account).catch((err: Error) => {
      throw new Error(`local IAM: cannot evaluate ${r.action} on ${r.resource} for ${fn}: ${err.message}`);
    });
    const s = d.decidingStatement;
    const statement = s && `${s.policy} statement ${s.sid ?? `#${s.index}`} (${s.effect})`;
    if (d.allowed) return { allowed: true, decidedBy: statement ?? 'allowed' };
    if (d.result === 'ExplicitlyDenied') return { allowed: false, decidedBy: statement ?? 'an explicit deny' };
    return { allowed: false, decidedBy: 'no statement allows it' };
  }

  private record(fn: string, r: IamRequest, allowed: boolean): void {
    if (!this.opts.decisionsFile) return;
    const line = JSON.stringify({ fn, action: r.action, resource: r.resource, allowed });
    if (this.written.has(line)) return;
    this.written.add(line);
    appendFileSync(this.opts.decisionsFile, `${line}\n`);
  }

  private say(line: string): void {
    this.opts.log(line);
    process.stderr.write(`${line}\n`);
  }

  /**
   * Wraps `send` of the given smithy `Client.prototype`s: inside a handler, each command is turned
   * into IAM requests and refused, before it is sent, with `exceptions[serviceId]` named
   * AccessDeniedException (HTTP 403) when any request is refused.
   */
  instrument(clientPrototypes: object[], exceptions: Record<string, ServiceExceptionClass>): void {
    for (const proto of new Set(clientPrototypes)) {
      const p = proto as { send: Send; __iam?: { enforcer: IamEnforcer; exceptions: Record<string, ServiceExceptionClass> } };
      // Patched once per prototype; a later enforcer (a restarted stack, a test) takes the patch over.
      const patched = p.__iam !== undefined;
      p.__iam = { enforcer: this, exceptions };
      if (patched) continue;
      const original = p.send;
      p.send = function enforced(this: { config?: { serviceId?: string } }, command: Command, ...rest: unknown[]) {
        const { enforcer, exceptions: ex } = p.__iam!;
        const fn = enforcer.current();
        if (!fn) return original.call(this, command, ...rest);
        const service = this.config?.serviceId ?? '';
        // The SDK's callback form (send(command, options?, cb)) is not used by the service.
        return enforcer.check(fn, enforcer.requestsOf(service, command)).then((refusal) => {
          if (refusal === undefined) return original.call(this, command, ...rest);
          const E = ex[service];
          if (!E) throw Object.assign(new Error(refusal), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } });
          throw new E({
            name: 'AccessDeniedException',
            $fault: 'client',
            $metadata: { httpStatusCode: 403, requestId: `local-iam-${Date.now()}`, attempts: 1, totalRetryDelay: 0 },
            message: refusal,
          });
        });
      };
    }
  }

  /** The IAM requests of an SDK command of `service` (smithy serviceId). */
  requestsOf(service: string, command: Command): IamRequest[] {
    const raw = command.constructor.name.replace(/Command$/, '');
    const name = service === 'DynamoDB' ? (DOC_COMMANDS[raw] ?? raw) : raw;
    const input = command.input ?? {};
    const { region, account } = this.opts;
    switch (service) {
      case 'DynamoDB':
        return dynamoRequests(name, input, this.opts.dynamoKeys, (t) => `arn:aws:dynamodb:${region}:${account}:table/${t}`);
      case 'SQS': {
        const url = String(input.QueueUrl ?? '');
        const action = name === 'GetQueueUrl' ? 'GetQueueUrl' : name.replace(/Batch$/, '');
        const resource = url ? this.opts.queueArnOf(url) : `arn:aws:sqs:${region}:${account}:${String(input.QueueName ?? '*')}`;
        return [{ action: `sqs:${action}`, resource, context: {} }];
      }
      case 'SNS': {
        const action = name === 'PublishBatch' ? 'Publish' : name;
        const target = String(input.TopicArn ?? input.TargetArn ?? '');
        // A direct SMS (PhoneNumber) names no SNS resource; the local stand-in topic for SMS is evaluated the same way.
        const resource = input.PhoneNumber || (target && target === this.opts.smsStandInTopicArn) ? '*' : target || '*';
        return [{ action: `sns:${action}`, resource, context: {} }];
      }
      case 'SFN': {
        const sm = String(input.stateMachineArn ?? '');
        const exec = String(input.executionArn ?? '');
        const resource = sm || exec || (/^SendTask/.test(name) ? (this.opts.stateMachineArn ?? '*') : '*');
        return [{ action: `states:${name}`, resource, context: {} }];
      }
      case 'KMS': {
        const keyId = String(input.KeyId ?? '*');
        const resource = keyId.startsWith('arn:')
          ? keyId
          : keyId.startsWith('alias/')
            ? `arn:aws:kms:${region}:${account}:${keyId}`
            : `arn:aws:kms:${region}:${account}:key/${keyId}`;
        const ec = (input.EncryptionContext ?? {}) as Record<string, string>;
        const context: Record<string, string | string[]> = {};
        if (Object.keys(ec).length) {
          context['kms:EncryptionContextKeys'] = Object.keys(ec);
          for (const [k, v] of Object.entries(ec)) context[`kms:EncryptionContext:${k}`] = v;
        }
        return [{ action: `kms:${name}`, resource, context }];
      }
      case 'Secrets Manager': {
        const id = String(input.SecretId ?? '*');
        return [
          {
            action: `secretsmanager:${name}`,
            resource: id.startsWith('arn:') ? id : `arn:aws:secretsmanager:${region}:${account}:secret:${id}`,
            context: {},
          },
        ];
      }
      default:
        return [{ action: `${service.toLowerCase().replace(/\s+/g, '')}:${name}`, resource: '*', context: {} }];
    }
  }

  /**
   * Wraps `globalThis.fetch`: a handler's request to the local S3 endpoint (`s3Origin`,
   * path-style `/<bucket>/<key>`) is evaluated first and answered 403 `AccessDenied` when
   * refused; a 404 of GetObject becomes 403 unless the role may list the key (`s3:ListBucket`
   * with `s3:prefix` = the key), as S3 answers. Other requests pass untouched.
   */
  instrumentFetch(): void {
    if (!this.opts.s3Origin) return;
    const g = globalThis as { fetch: typeof fetch & { __iam?: IamEnforcer } };
    if (g.fetch.__iam) {
      g.fetch.__iam = this; // a later enforcer takes the patch over
      return;
    }
    const original = g.fetch;
    const wrapped = Object.assign(
      async function enforcedFetch(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
        const enforcer = wrapped.__iam;
        const fn = enforcer.current();
        const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
        if (!fn || !enforcer.opts.s3Origin || url.origin !== new URL(enforcer.opts.s3Origin).origin) return original(input, init);
        const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        const requests = s3Requests(method, url, headers);
        const refusal = await enforcer.check(fn, requests);
        if (refusal !== undefined) return s3AccessDenied(refusal);
        const res = await original(input, init);
        const get = requests[0]!;
        if (res.status === 404 && get.action === 's3:GetObject') {
          const bucketArn = get.resource.slice(0, get.resource.indexOf('/'));
          const key = get.resource.slice(get.resource.indexOf('/') + 1);
          const listRefusal = await enforcer.check(fn, [{ action: 's3:ListBucket', resource: bucketArn, context: { 's3:prefix': key } }]);
          if (listRefusal !== undefined) {
            await res.body?.cancel().catch(() => undefined);
            return s3AccessDenied(`${listRefusal} (a GetObject of a missing key answers 403 without s3:ListBucket)`);
          }
        }
        return res;
      },
      { __iam: this as IamEnforcer },
    );
    g.fetch = wrapped as typeof fetch & { __iam: IamEnforcer };
  }
}

/** The S3 error answer to a refused request. */
function s3AccessDenied(message: string): Response {
  const esc = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${esc}</Message><RequestId>local-iam-${Date.now()}</RequestId></Error>`;
  return new Response(body, { status: 403, statusText: 'Forbidden', headers: { 'content-type': 'application/xml' } });
}

/** IAM requests of a path-style S3 request. */
function s3Requests(method: string, url: URL, headers: Headers): IamRequest[] {
  const [bucket = '', ...rest] = url.pathname.replace(/^\//, '').split('/');
  const key = rest.map((p) => decodeURIComponent(p)).join('/');
  const bucketArn = `arn:aws:s3:::${decodeURIComponent(bucket)}`;
  if (!key) {
    if (method === 'GET' || method === 'HEAD')
      return [{ action: 's3:ListBucket', resource: bucketArn, context: { 's3:prefix': url.searchParams.get('prefix') ?? '' } }];
    if (method === 'POST' && url.searchParams.has('delete'))
      return [{ action: 's3:DeleteObject', resource: `${bucketArn}/*`, context: {} }];
    if (method === 'PUT') return [{ action: 's3:CreateBucket', resource: bucketArn, context: {} }];
    if (method === 'DELETE') return [{ action: 's3:DeleteBucket', resource: bucketArn, context: {} }];
  }
  const objectArn = `${bucketArn}/${key}`;
  switch (method) {
    case 'GET':
    case 'HEAD':
      return [{ action: 's3:GetObject', resource: objectArn, context: {} }];
    case 'PUT':
    case 'POST': {
      const copy = headers.get('x-amz-copy-source');
      const put: IamRequest = { action: 's3:PutObject', resource: objectArn, context: {} };
      return copy
        ? [put, { action: 's3:GetObject', resource: `arn:aws:s3:::${decodeURIComponent(copy.replace(/^\//, ''))}`, context: {} }]
        : [put];
    }
    case 'DELETE':
      return [{ action: 's3:DeleteObject', resource: objectArn, context: {} }];
    default:
      return [{ action: `s3:${method}`, resource: objectArn, context: {} }];
  }
}

/** A key attribute's value as a string: native (lib-dynamodb) or marshalled (`{S: …}`). */
function keyValue(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint') return String(v);
  const o = v as { S?: string; N?: string; B?: unknown };
  if (o.S !== undefined) return o.S;
  if (o.N !== undefined) return o.N;
  return String(o.B ?? v);
}

/** The partition key value of a Query (KeyConditionExpression `pk = :v`, or legacy KeyConditions). */
function queryPartitionKey(input: Record<string, unknown>, attribute: string): string | undefined {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const expr = String(input.KeyConditionExpression ?? '');
  for (const m of expr.matchAll(/([#\w.]+)\s*=\s*(:\w+)/g)) {
    const name = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (name === attribute) return keyValue(values[m[2]!]);
  }
  const kc = (input.KeyConditions ?? {}) as Record<string, { AttributeValueList?: unknown[] }>;
  return keyValue(kc[attribute]?.AttributeValueList?.[0]);
}

/** IAM requests of a DynamoDB command (low-level name), each item of a batch or transaction apart. */
function dynamoRequests(
  name: string,
  input: Record<string, unknown>,
  keys: IamEnforcerOptions['dynamoKeys'],
  tableArn: (table: string) => string,
): IamRequest[] {
  const item = (action: string, table: string, key: Record<string, unknown> | undefined, index?: string): IamRequest => {
    const schema = keys[table];
    const pk = schema && key ? keyValue(key[schema.partitionKey]) : undefined;
    return {
      action: `dynamodb:${action}`,
      resource: index ? `${tableArn(table)}/index/${index}` : tableArn(table),
      context: pk !== undefined ? { 'dynamodb:LeadingKeys': [pk] } : {},
    };
  };
  const table = String(input.TableName ?? '');
  switch (name) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [item(name, table, input.Key as Record<string, unknown>)];
    case 'PutItem':
      return [item(name, table, input.Item as Record<string, unknown>)];
    case 'Query': {
      const index = input.IndexName ? String(input.IndexName) : undefined;
      const schema = keys[table];
      const attribute = schema ? (index ? schema.indexes[index] : schema.partitionKey) : undefined;
      const pk = attribute ? queryPartitionKey(input, attribute) : undefined;
      return [
        {
          action: 'dynamodb:Query',
          resource: index ? `${tableArn(table)}/index/${index}` : tableArn(table),
          context: pk !== undefined ? { 'dynamodb:LeadingKeys': [pk] } : {},
        },
      ];
    }
    case 'Scan':
      return [
        {
          action: 'dynamodb:Scan',
          resource: input.IndexName ? `${tableArn(table)}/index/${String(input.IndexName)}` : tableArn(table),
          context: {},
        },
      ];
    case 'BatchGetItem':
      return Object.entries((input.RequestItems ?? {}) as Record<string, { Keys?: Array<Record<string, unknown>> }>).flatMap(([t, r]) =>
        (r.Keys ?? []).map((k) => item('BatchGetItem', t, k)),
      );
    case 'BatchWriteItem':
      return Object.entries(
        (input.RequestItems ?? {}) as Record<
          string,
          Array<{ PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } }>
        >,
      ).flatMap(([t, rs]) => rs.map((r) => item('BatchWriteItem', t, r.PutRequest?.Item ?? r.DeleteRequest?.Key)));
    case 'TransactWriteItems':
      return (
        (input.TransactItems ?? []) as Array<
          Record<string, { TableName: string; Key?: Record<string, unknown>; Item?: Record<string, unknown> }>
        >
      ).map((ti) => {
        const [kind, op] = Object.entries(ti)[0]!;
        const action =
          ({ Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' } as Record<string, string>)[
            kind
          ] ?? kind;
        return item(action, op.TableName, op.Key ?? op.Item);
      });
    case 'TransactGetItems':
      return ((input.TransactItems ?? []) as Array<{ Get: { TableName: string; Key: Record<string, unknown> } }>).map((ti) =>
        item('GetItem', ti.Get.TableName, ti.Get.Key),
      );
    case 'ExecuteStatement':
    case 'BatchExecuteStatement':
    case 'ExecuteTransaction':
      // PartiQL: authorised per statement kind (PartiQLSelect/Insert/Update/Delete) on the table it names.
      return partiqlRequests(input, tableArn);
    default:
      return [{ action: `dynamodb:${name}`, resource: table ? tableArn(table) : '*', context: {} }];
  }
}

function partiqlRequests(input: Record<string, unknown>, tableArn: (t: string) => string): IamRequest[] {
  const statements = input.Statement
    ? [String(input.Statement)]
    : ((input.Statements ?? input.TransactStatements ?? []) as Array<{ Statement: string }>).map((s) => s.Statement);
  return statements.map((s) => {
    const verb = /^\s*(\w+)/.exec(s)?.[1]?.toLowerCase() ?? 'select';
    const table = /(?:from|into|update)\s+"?([\w.-]+)"?/i.exec(s)?.[1] ?? '*';
    return { action: `dynamodb:PartiQL${verb[0]!.toUpperCase()}${verb.slice(1)}`, resource: tableArn(table), context: {} };
  });
}

/** Glob (`*`, `?`) match, whole string. */

/** IAM's resource match: `*`, or an ARN matched segment by segment (the resource part may hold colons). */
function arnMatch(pattern: string, arn: string): boolean {
  if (pattern === '*') return true;
  const p = splitArn(pattern);
  const a = splitArn(arn);
  if (p.length !== a.length) return globMatch(pattern, arn);
  return p.every((seg, i) => globMatch(seg, a[i]!));
}
function splitArn(s: string): string[] {
  const parts = s.split(':');
  return parts.length <= 6 ? parts : [...parts.slice(0, 5), parts.slice(5).join(':')];
}

/**
 * What decides a role's cache keys: every Resource/NotResource pattern, the condition values per
 * context key (or 'raw' when an operator other than string/Null uses it), and, per resource ARN
 * already seen, which patterns it matches (a fixed fact of the two strings, remembered so each
 * request does not match every pattern again).
 */
interface PolicyShape {
  resources: string[];
  context: Map<string, string[] | 'raw'>;
  matches: Map<string, string>;
}

/** Resource ARNs whose pattern matches one role's shape remembers before it starts afresh. */
const MAX_REMEMBERED_RESOURCES = 10_000;

/** The {@link PolicyShape} of a role's policy documents. */
function policyShape(docs: PolicyDocument[]): PolicyShape {
  const resources = new Set<string>();
  const context = new Map<string, string[] | 'raw'>();
  for (const doc of docs) {
    for (const st of ([] as Array<Record<string, unknown>>).concat(doc.Statement)) {
      for (const r of ([] as unknown[]).concat(st.Resource ?? [], st.NotResource ?? [])) resources.add(String(r));
      for (const [op, block] of Object.entries((st.Condition ?? {}) as Record<string, Record<string, unknown>>)) {
        for (const [k, v] of Object.entries(block)) {
          const key = k.toLowerCase();
          const prev = context.get(key);
          if (prev === 'raw' || !CACHEABLE_OPERATORS.test(op)) {
            context.set(key, 'raw');
            continue;
          }
          context.set(key, [...(prev ?? []), ...([] as unknown[]).concat(v).map(String)]);
        }
      }
    }
  }
  return { resources: [...resources], context, matches: new Map() };
}

/**
 * Cache key of a request: the function, the action, which of the role's resource patterns the
 * resource matches, and per context key the set of (pattern match, equality) vectors of its
 * values. Two requests with the same key get the same decision from string and Null conditions.
 */
function cacheKey(fn: string, r: IamRequest, shape: PolicyShape): string {
  let res = shape.matches.get(r.resource);
  if (res === undefined) {
    res = shape.resources.map((p) => (arnMatch(p, r.resource) ? '1' : '0')).join('');
    // A handful of tables, indexes and queues, but one S3 key per object: bounded, emptied when full.
    if (shape.matches.size >= MAX_REMEMBERED_RESOURCES) shape.matches.clear();
    shape.matches.set(r.resource, res);
  }
  const ctx = Object.keys(r.context)
    .sort()
    .map((k) => {
      const values = ([] as string[]).concat(r.context[k]!);
      const patterns = shape.context.get(k.toLowerCase());
      if (patterns === 'raw') return `${k}=${JSON.stringify(values)}`;
      const vectors = new Set(values.map((v) => (patterns ?? []).map((p) => `${globMatch(p, v) ? 1 : 0}${p === v ? 1 : 0}`).join('')));
      return `${k}:${values.length ? 'some' : 'none'}:${[...vectors].sort().join(',')}`;
    });
  return `${fn}|${r.action}|${res}|${ctx.join('|')}`;
}
