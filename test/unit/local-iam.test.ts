/**
 * The local stack's IAM enforcement (infra/local/iam/enforcer.ts): real SDK clients and the real S3
 * upload reader, inside a handler's context, evaluated with the IAM simulator against role
 * policies shaped as the CDK stack writes them (infra/stack/needs.ts). The clients' transport is a
 * counter that answers 200, so a refused call is one that never reached it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { SQSClient, SQSServiceException, SendMessageCommand } from '@aws-sdk/client-sqs';
import { IamEnforcer, type KnownRefusal } from '../../infra/local/iam/enforcer';
import type { TemplateRolePolicies } from '../../infra/local/iam/policy-cache';
import { localArns, resolvePolicies } from '../../infra/tools/iam/role-policies';
import { S3UploadReader } from '../../shared/adapters/aws/s3-object-reader';
import { repoRoot } from '../../shared/runtime/paths';

const TABLE = 'coffee-trace-local';
const TABLE_ARN = `arn:aws:dynamodb:us-east-1:000000000000:table/${TABLE}`;
const TABLE_RESOURCES = [TABLE_ARN, `${TABLE_ARN}/index/GSI1`, `${TABLE_ARN}/index/GSI2`];
const UPLOADS = 'uploads-bucket';
const SM_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:sm';
const QUEUE_URL = 'http://127.0.0.1:1/000000000000/coffee-trace-ledger-writes.fifo';
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:coffee-trace-ledger-writes.fifo';

/** A role as bindNeeds writes it: table write, deletes denied, audit updates (and, for non-appenders, puts) denied. */
function role(opts: { auditPutDenied: boolean; uploadsList: boolean; queue: boolean }) {
  const statements: Array<Record<string, unknown>> = [
    { Effect: 'Deny', Action: ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PartiQLDelete'], Resource: TABLE_RESOURCES },
    {
      Sid: 'AuditUpdatesDenied',
      Effect: 'Deny',
      Action: ['dynamodb:UpdateItem', 'dynamodb:PartiQLUpdate'],
      Resource: TABLE_RESOURCES,
      Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#*'] } },
    },
    {
      Effect: 'Allow',
      Action: [
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:ConditionCheckItem',
      ],
      Resource: TABLE_RESOURCES,
    },
    { Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:aws:s3:::${UPLOADS}/evidence-uploads/*` },
  ];
  if (opts.auditPutDenied)
    statements.push({
      Sid: 'AuditPutsDenied',
      Effect: 'Deny',
      Action: 'dynamodb:PutItem',
      Resource: TABLE_RESOURCES,
      Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#*'] } },
    });
  if (opts.uploadsList)
    statements.push({
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: `arn:aws:s3:::${UPLOADS}`,
      Condition: { StringLike: { 's3:prefix': ['evidence-uploads/*'] } },
    });
  if (opts.queue)
    statements.push({
      Effect: 'Allow',
      Action: ['states:SendTaskFailure', 'states:SendTaskHeartbeat', 'states:SendTaskSuccess'],
      Resource: SM_ARN,
    });
  if (opts.queue)
    statements.push({
      Effect: 'Allow',
      Action: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
      Resource: { 'Fn::GetAtt': ['LedgerQueue', 'Arn'] },
    });
  return [{ name: 'DefaultPolicy', policy: { Version: '2012-10-17', Statement: statements as never } }];
}

const TEMPLATE: TemplateRolePolicies = {
  format: 2,
  functions: {
    'create-webhook-endpoint': role({ auditPutDenied: true, uploadsList: false, queue: false }),
    'submit-batch': role({ auditPutDenied: false, uploadsList: true, queue: true }),
  },
  counterparts: { LedgerQueue: { kind: 'queue', queue: 'ledger-write-queue', dlq: false } },
  stateMachineName: 'CoffeeTrace-payout-lifecycle',
};

let sent = 0;
const okTransport = {
  handle: async () => {
    sent++;
    return {
      response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from('{}')]) },
    };
  },
};

function enforcer(extra: { decisionsFile?: string; knownRefusals?: KnownRefusal[]; s3Origin?: string } = {}) {
  const lines: string[] = [];
  const policies = resolvePolicies(
    TEMPLATE.functions,
    localArns(TEMPLATE.counterparts, TEMPLATE.stateMachineName, {
      region: 'us-east-1',
      account: '000000000000',
      tableName: TABLE,
      tableStreamArn: `${TABLE_ARN}/stream/x`,
      queues: { 'ledger-write-queue': { arn: QUEUE_ARN, dlqArn: `${QUEUE_ARN}-dlq` } },
      topicArn: 'arn:aws:sns:us-east-1:000000000000:t',
      buckets: { evidence: 'evidence-bucket', 'evidence-uploads': UPLOADS },
      stateMachineArn: SM_ARN,
      functionArn: (fn) => fn,
    }),
  );
  const e = new IamEnforcer({
    policies,
    region: 'us-east-1',
    account: '000000000000',
    log: (l) => lines.push(l),
    dynamoKeys: { [TABLE]: { partitionKey: 'PK', indexes: { GSI1: 'GSI1PK', GSI2: 'GSI2PK' } } },
    queueArnOf: (url) => (url === QUEUE_URL ? QUEUE_ARN : 'unknown'),
    ...extra,
  });
  e.instrument([Object.getPrototypeOf(DynamoDBClient.prototype) as object, Object.getPrototypeOf(SQSClient.prototype) as object], {
    DynamoDB: DynamoDBServiceException as never,
    SQS: SQSServiceException as never,
  });
  return { e, lines };
}

const doc = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      requestHandler: okTransport as never,
    }),
  );
const put = (pk: string) => new PutCommand({ TableName: TABLE, Item: { PK: pk, SK: 'ENTRY#1', v: 1 } });

let stderr: jest.SpyInstance;
beforeEach(() => {
  sent = 0;
  stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => stderr.mockRestore());

describe('DynamoDB', () => {
  test("a put on AUDIT# by a role denied it is refused with the client's AccessDeniedException, naming function, action and resource", async () => {
    const { e, lines } = enforcer();
    const err = await e
      .wrap('create-webhook-endpoint', () => doc().send(put('AUDIT#b-1')))()
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(DynamoDBServiceException);
    expect(err).toMatchObject({ name: 'AccessDeniedException', $fault: 'client', $metadata: { httpStatusCode: 403 } });
    expect((err as Error).message).toContain('dynamodb:PutItem');
    expect((err as Error).message).toContain(TABLE_ARN);
    expect((err as Error).message).toContain('create-webhook-endpoint');
    expect(sent).toBe(0);
    expect(lines.join('\n')).toMatch(
      /IAM refused: function create-webhook-endpoint: dynamodb:PutItem on arn:aws:dynamodb:us-east-1:000000000000:table\/coffee-trace-local \{"dynamodb:LeadingKeys":\["AUDIT#b-1"\]\}; decided by DefaultPolicy statement AuditPutsDenied \(Deny\)/,
    );
  });

  test('the same put by an audit appender, and a put elsewhere by the denied role, are allowed and sent', async () => {
    const { e } = enforcer();
    await e.wrap('submit-batch', () => doc().send(put('AUDIT#b-1')))();
    await e.wrap('create-webhook-endpoint', () => doc().send(put('WEBHOOK#w-1')))();
    expect(sent).toBe(2);
  });

  test('a transaction with one refused item is refused as a whole; nothing is sent', async () => {
    const { e } = enforcer();
    const tx = new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: TABLE, Item: { PK: 'WEBHOOK#w-1', SK: 'META' } } },
        { Put: { TableName: TABLE, Item: { PK: 'AUDIT#b-1', SK: 'ENTRY#2' } } },
      ],
    });
    await expect(e.wrap('create-webhook-endpoint', () => doc().send(tx))()).rejects.toMatchObject({ name: 'AccessDeniedException' });
    const del = new TransactWriteCommand({ TransactItems: [{ Delete: { TableName: TABLE, Key: { PK: 'LOAN_GUARD#b-1', SK: 'GUARD' } } }] });
    await expect(e.wrap('submit-batch', () => doc().send(del))()).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('dynamodb:DeleteItem'),
    });
    expect(sent).toBe(0);
  });

  test('calls outside any handler are not evaluated; a function without a role is refused', async () => {
    const { e } = enforcer();
    await doc().send(put('AUDIT#b-1'));
    expect(sent).toBe(1);
    await expect(e.wrap('no-such-function', () => doc().send(put('X#1')))()).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  test('a known refusal is logged and let through', async () => {
    const { e, lines } = enforcer({
      knownRefusals: [{ fn: 'create-webhook-endpoint', action: 'dynamodb:PutItem', leadingKey: 'AUDIT#*', why: 'test' }],
    });
    await e.wrap('create-webhook-endpoint', () => doc().send(put('AUDIT#b-2')))();
    expect(sent).toBe(1);
    expect(lines.join('\n')).toContain('IAM refusal let through (known');
  });

  test('decisions are cached per pattern match, not per key', async () => {
    const { e } = enforcer();
    for (let i = 0; i < 5; i++) await e.wrap('create-webhook-endpoint', () => doc().send(put(`WEBHOOK#w-${i}`)))();
    await e
      .wrap('create-webhook-endpoint', () => doc().send(put('AUDIT#b-9')))
      .call(null)
      .catch(() => undefined);
    expect(e.stats).toMatchObject({ simulated: 2, cached: 4 });
  });
});

describe('Step Functions task-token callbacks', () => {
  test('SendTaskFailure is decided on the state machine that owns the token, as AWS does: allowed by a grant on it, refused without one', async () => {
    const { e } = enforcer();
    const callback = { action: 'states:SendTaskFailure', resource: SM_ARN, context: {} };
    expect(await e.decide('submit-batch', callback)).toMatchObject({ allowed: true });
    expect(await e.decide('create-webhook-endpoint', callback)).toMatchObject({ allowed: false, decidedBy: 'no statement allows it' });
    expect(await e.decide('submit-batch', { ...callback, resource: `${SM_ARN}-other` })).toMatchObject({ allowed: false });
  });
});

describe('SQS', () => {
  test("SendMessage to a granted queue is allowed; a role without the grant gets SQS's AccessDeniedException", async () => {
    const { e } = enforcer();
    const sqs = new SQSClient({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      requestHandler: okTransport as never,
    });
    const send = new SendMessageCommand({ QueueUrl: QUEUE_URL, MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'd' });
    await e
      .wrap('submit-batch', () => sqs.send(send))()
      .catch(() => undefined); // the fake transport's body is not a valid SQS answer: only the sending counts
    expect(sent).toBe(1);
    const err = await e
      .wrap('create-webhook-endpoint', () => sqs.send(send))()
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(SQSServiceException);
    expect(err).toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`sqs:SendMessage on resource: ${QUEUE_ARN}`),
    });
    expect(sent).toBe(1);
  });
});

describe('S3 through the signed-fetch upload reader', () => {
  let server: Server;
  let origin = '';
  const requests: string[] = [];
  beforeAll(async () => {
    // A stand-in S3: `present` exists, everything else is 404 (as fauxqs answers).
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      if (req.url === `/${UPLOADS}/evidence-uploads/present`) {
        res.writeHead(200, { 'content-length': '3' });
        res.end('abc');
      } else {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end('<Error><Code>NoSuchKey</Code></Error>');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const reader = () => new S3UploadReader({ bucket: UPLOADS, region: 'us-east-1', endpoint: origin });

  test('a missing object without s3:ListBucket is 403 AccessDenied (the reader fails), with it 404 (the reader answers null)', async () => {
    const { e, lines } = enforcer({ s3Origin: origin });
    e.instrumentFetch();
    await expect(e.wrap('create-webhook-endpoint', () => reader().read('evidence-uploads/missing', 1000))()).rejects.toThrow(
      /answered 403/,
    );
    expect(lines.join('\n')).toContain('s3:ListBucket on arn:aws:s3:::uploads-bucket {"s3:prefix":"evidence-uploads/missing"}');
    await expect(e.wrap('submit-batch', () => reader().read('evidence-uploads/missing', 1000))()).resolves.toBeNull();
    await expect(e.wrap('create-webhook-endpoint', () => reader().read('evidence-uploads/present', 1000))()).resolves.toMatchObject({
      sizeBytes: 3,
    });
  });

  test('a GetObject outside the granted prefix is refused before it reaches S3, with the S3 XML error body', async () => {
    const { e } = enforcer({ s3Origin: origin });
    e.instrumentFetch();
    const before = requests.length;
    const res = await e.wrap('submit-batch', async () => fetch(`${origin}/${UPLOADS}/other/x`))();
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(
      /<Error><Code>AccessDenied<\/Code><Message>User: .* is not authorized to perform: s3:GetObject on resource: arn:aws:s3:::uploads-bucket\/other\/x/,
    );
    expect(requests.length).toBe(before);
  });
});

describe('decisions file', () => {
  test('every evaluated request is one JSON line {fn, action, resource, allowed}, deduplicated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'local-iam-'));
    try {
      const file = join(dir, 'decisions.jsonl');
      const { e } = enforcer({ decisionsFile: file });
      await e.wrap('create-webhook-endpoint', () => doc().send(put('WEBHOOK#w-1')))();
      await e.wrap('create-webhook-endpoint', () => doc().send(put('WEBHOOK#w-2')))();
      await e
        .wrap('create-webhook-endpoint', () => doc().send(put('AUDIT#b-1')))()
        .catch(() => undefined);
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toEqual([
        { fn: 'create-webhook-endpoint', action: 'dynamodb:PutItem', resource: TABLE_ARN, allowed: true },
        { fn: 'create-webhook-endpoint', action: 'dynamodb:PutItem', resource: TABLE_ARN, allowed: false },
      ]);
      expect(Object.keys(lines[0]!)).toEqual(['fn', 'action', 'resource', 'allowed']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the simulator stays a dev dependency', () => {
  test('only infra/local/iam and infra/tools/iam (dev tools) import @cloud-copilot (AGPL): no function, shared module or other infrastructure does', () => {
    const root = repoRoot();
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(join(root, dir))) {
        const rel = `${dir}/${e}`;
        if (statSync(join(root, rel)).isDirectory()) walk(rel);
        else if (
          /\.[cm]?[tj]s$/.test(e) &&
          !rel.startsWith('infra/local/iam/') &&
          !rel.startsWith('infra/tools/iam/') &&
          /from ['"]@cloud-copilot\/|import\(['"]@cloud-copilot\/|require\(['"]@cloud-copilot\//.test(readFileSync(join(root, rel), 'utf8'))
        )
          offenders.push(rel);
      }
    };
    for (const d of ['functions', 'shared', 'infra']) walk(d);
    expect(offenders).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    expect(pkg.dependencies?.['@cloud-copilot/iam-simulate']).toBeUndefined();
    expect(pkg.devDependencies?.['@cloud-copilot/iam-simulate']).toBeDefined();
  });
});
