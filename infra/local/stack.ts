import { DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC } from '../../shared/domain/payout-limits';
import { DEFAULT_PAYOUT_BALANCE_ALARM_USD } from '../../shared/domain/payout-balance';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeLocalStackFile } from './stack-file';
import { privateKeyToAccount } from 'viem/accounts';
import { AUTHORIZER_FN, manifestProblems, missingLocalEnvironment, QUEUES, routes, workers, type QueueName } from '../../shared/manifest';
import { repoRoot } from '../../shared/runtime/paths';
import { compileContracts } from '../ledger/compile';
import { deployContracts, fundAccount, setUpLocalVaultAccounts } from '../ledger/deploy';
import { DEV_BUYER_USDC_MICRO, devBuyerKey, devOnRampKey, outboundSecretKeyFile } from './dev-keys';
import {
  DEV_CHAIN_WEBHOOK_SECRET,
  DEV_EUDR_CREDENTIALS,
  DEV_MAAIF_API_KEY,
  DEV_PAYOUT_WEBHOOK_SECRET,
  DEV_PROVIDER_CREDENTIALS,
  LOCAL_JWT_AUDIENCE,
  LOCAL_JWT_ISSUER,
  ledgerSignerKey,
  localDataDir,
  localJwks,
} from './dev-keys';
import { createServiceTable, LOCAL_TABLE_NAME, startDynamoDbLocal } from './dynamodb-local';
import { startGateway, type AuthorizerHandler, type ProxyHandler } from './gateway';
import { DEFAULT_LEDGER_BLOCK_TIME_S, startHardhatNode } from './hardhat-node';
import { startPayoutSandbox, type PayoutSandbox } from './payout-sandbox';
import { startLocalPawaPay, type PawaPaySandbox } from './pawapay-sandbox';
import { DEV_ONRAMP_CREDENTIALS, DEV_ONRAMP_WEBHOOK_SECRET, mintingDelivery, startOnRampSandbox } from './onramp-sandbox';
import { pollConsumer } from './queue-poller';
import { startFauxqsAsSqs } from './fauxqs-fifo';
import { drainNotifications } from './notifications-drain';
import { enableTableStream, pollTableStream } from './table-stream-poller';
import { CHAIN_WATCHER_FN, localChainEventsMode, startChainWatcher } from './chain-watcher';
import { startDdsRegistrySandbox } from './dds-registry-sandbox';
import { startFarmerRegistrySandbox } from './farmer-registry-sandbox';
import { IPFS_PATH_PREFIX, ipfsGatewayHandler } from './ipfs-gateway-route';
import { startIpfsPinningSandbox } from './ipfs-pinning-sandbox';
import { useForestCheck } from '../../shared/composition/registry';
import { BundledAlertAreasForestCheck } from '../../shared/adapters/forest-check/bundled-alert-areas';
import { startLocalStepFunctions, type LocalStepFunctions } from './step-functions';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SFNClient } from '@aws-sdk/client-sfn';
import { Meter } from './metering';
import { localIamEnforced, startLocalIam } from './iam/local-iam';
import type { IamEnforcer } from './iam/enforcer';
import { preparePriceFeedFile } from './price-feed-file';
import { localLambdaContext } from './lambda-context';
import { checkPublicBaseUrl } from '../../shared/config';
import { DEFAULT_LOAN_TERM_DAYS } from '../../shared/domain/loan-terms';

/**
 * The whole service on one machine (docs/architecture.md#the-local-stack): DynamoDB Local, fauxqs (SQS/SNS), a hardhat
 * node with the BatchToken and TraceLog contracts compiled from source and deployed, the payout
 * state machine's ASL run by aws-local-stepfunctions behind a local Step Functions endpoint, the
 * payout-provider sandbox, queue pollers standing in for Lambda event sources, SNS notifications
 * appended to `$LOCAL_DATA_DIR/notifications.jsonl`, and the gateway on PORT.
 *
 * Handlers run in this process and reach every component through the real AWS SDK and viem
 * clients, configured only by environment variables (AWS_ENDPOINT_URL_*, TABLE_NAME, …): the same
 * variables the CDK stack sets in AWS. Queues, their consumers and batch sizes come from the
 * service manifest (shared/manifest.ts) as in CDK, and the start fails naming any variable a
 * function's needs declare that is not set here. Every port but PORT is picked free at start.
 *
 * IAM (docs/local-iam.md, ./iam/): every AWS call a handler makes is evaluated against its
 * function's role in the synthesized CDK template and refused as AWS would refuse it, unless
 * LOCAL_IAM_ENFORCE=false; LOCAL_IAM_DECISIONS_FILE=<path> records every decision as JSON lines.
 *
 * LOCAL_METERING_FILE=<path> (benchmarks only) turns on usage metering (./metering.ts): every
 * handler, queue consumer, state-machine task and scheduled worker is counted, the counters are
 * served at GET /__local/metering and written to the file when the stack stops.
 */

export interface LocalStackOptions {
  port: number;
  dataDir?: string;
  timeScale?: number;
  /** Seconds between blocks of the local chain once the contracts are deployed (0: each transaction mined at once; default 2). */
  blockTimeS?: number;
  settleMs?: number;
  /** Payout sandbox faults (benchmarks). */
  sandboxFaults?: { rejectRate?: number; dropWebhookRate?: number; unreachableRate?: number };
  log?: (line: string) => void;
}

export interface LocalStack {
  url: string;
  dataDir: string;
  endpoints: Record<string, string>;
  sandbox: PayoutSandbox;
  pawapay: PawaPaySandbox;
  stepFunctions: LocalStepFunctions;
  pids: Record<string, number>;
  stop(): Promise<void>;
}

/** The own copy of evidence (EVIDENCE_BUCKET) and the pinning sandbox's storage, both on fauxqs's S3 (docs/api/evidence.md#evidence-on-ipfs). */
export const LOCAL_EVIDENCE_BUCKET = 'coffee-trace-evidence-local';
const LOCAL_PINNING_STORAGE_BUCKET = 'coffee-trace-pinning-sandbox-storage';
/** The pinning sandbox's own bucket name and dev credentials (what an operator gets from the pinning service). */
const LOCAL_PINNING_BUCKET = 'coffee-trace-evidence-pins';
const DEV_PINNING_CREDENTIALS = { access_key_id: 'DEVPINNINGKEY', secret_access_key: 'dev-pinning-secret' };
/** The local evidence uploads bucket (fauxqs S3). */
const LOCAL_EVIDENCE_UPLOADS_BUCKET = 'coffee-trace-evidence-uploads-local';

/**
 * Local names and visibility timeouts (s) of the manifest's queues: shorter than in AWS, so a failed message is retried
 * within seconds; one being handled never reappears (./queue-poller.ts `hold`). FIFO-ness and DLQ receives: the manifest's.
 */
export const LOCAL_QUEUES: Record<QueueName, { name: string; visibilitySeconds: number }> = {
  'payout-request-queue': { name: 'coffee-trace-payout-requests', visibilitySeconds: 30 },
  'ledger-write-queue': { name: 'coffee-trace-ledger-writes', visibilitySeconds: 5 },
  'ledger-receipt-queue': { name: 'coffee-trace-ledger-receipts', visibilitySeconds: 5 },
  'dds-filing-queue': { name: 'coffee-trace-dds-filing', visibilitySeconds: 1 }, // retried every second until the registry has the numbers
  // Outbound webhooks: the retry schedule is the consumer's own (re-queued with a delay); a crash is retried after 5 s.
  'outbound-webhook-queue': { name: 'coffee-trace-outbound-webhooks', visibilitySeconds: 5 },
  'evidence-pin-queue': { name: 'coffee-trace-evidence-pins', visibilitySeconds: 2 }, // a failed pin is retried after 2 s
  // Order work: a run crashed half-way is continued after 65 s (longer than a run's 40 s budget, so two runs of one message rarely overlap).
  'order-work-queue': { name: 'coffee-trace-order-work', visibilitySeconds: 65 },
};
const LOCAL_STATE_MACHINE_NAME = 'coffee-trace-payout-lifecycle';
const LOCAL_STATE_MACHINE_ARN = `arn:aws:states:us-east-1:000000000000:stateMachine:${LOCAL_STATE_MACHINE_NAME}`;
const FN_ARN = (fn: string) => `arn:aws:lambda:us-east-1:000000000000:function:coffee-trace-${fn}`;

export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const log = opts.log ?? (() => undefined);
  const dataDir = opts.dataDir ?? localDataDir();
  mkdirSync(join(dataDir, 'logs'), { recursive: true });
  const timeScale = opts.timeScale ?? 1;
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch((err) => log(`stop error: ${(err as Error).message}`));
    stops.length = 0;
  };

  try {
    const problems = manifestProblems();
    if (problems.length > 0) throw new Error(`the manifest (shared/manifest.ts) is inconsistent: ${problems.join('; ')}`);
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // Business metrics (EMF lines, shared/runtime/metrics.ts) for an operator to read: $LOCAL_DATA_DIR/metrics.ndjson.
      METRICS_FILE: join(dataDir, 'metrics.ndjson'),
      POWERTOOLS_SERVICE_NAME: 'coffee-trace',
      POWERTOOLS_DEV: 'false',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'WARN',
    });

    // 1. processes and in-process servers that do not depend on each other, in parallel
    const before = new Set(process.listeners('unhandledRejection'));
    const [dynamo, chain, artifacts, fauxqs] = await Promise.all([
      startDynamoDbLocal(),
      startHardhatNode({ logFile: join(dataDir, 'logs', 'hardhat.log') }),
      compileContracts(),
      startFauxqsAsSqs({ port: 0, logger: false }),
    ]);
    stops.push(dynamo.stop, chain.stop, () => fauxqs.stop());
    // solc-js installs a process-wide 'unhandledRejection' handler that rethrows (and so kills the
    // whole local stack); replace it with one that logs, as a Lambda runtime would report it.
    for (const l of process.listeners('unhandledRejection')) if (!before.has(l)) process.removeListener('unhandledRejection', l);
    if (!process.listeners('unhandledRejection').length) {
      process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${(reason as Error)?.stack ?? String(reason)}`));
    }
    log(`DynamoDB Local ${dynamo.endpoint} (pid ${dynamo.pid}); hardhat ${chain.rpcUrl} (pid ${chain.pid}); fauxqs ${fauxqs.address}`);

    // 2. ledger: fund the dev signer, deploy the contracts from source
    const signerKey = ledgerSignerKey(dataDir);
    const signer = privateKeyToAccount(signerKey);
    await fundAccount(chain.rpcUrl, signer.address, 10n ** 21n);
    const contracts = await deployContracts({ rpcUrl: chain.rpcUrl, chainId: 31337, deployerKey: signerKey, artifacts });
    // The lending vault's local accounts: the dev buyer (`npm run buyer-pay`) holds TestUSDC, the dev on-ramp may mint it.
    await setUpLocalVaultAccounts({
      rpcUrl: chain.rpcUrl,
      chainId: 31337,
      adminKey: signerKey,
      testUsdcAddress: contracts.vaultAssetAddress,
      buyerAddress: privateKeyToAccount(devBuyerKey(dataDir)).address,
      buyerUsdcMicro: DEV_BUYER_USDC_MICRO,
      onRampAddress: privateKeyToAccount(devOnRampKey(dataDir)).address,
    });
    // Deployed at once; from here on the chain makes a block every LEDGER_BLOCK_TIME_S (docs/ledger.md#the-local-chain).
    const blockTimeS = opts.blockTimeS ?? DEFAULT_LEDGER_BLOCK_TIME_S;
    await chain.setBlockTime(blockTimeS);
    log(`ledger: ${blockTimeS === 0 ? 'each transaction mined at once' : `a block every ${blockTimeS} s`}`);

    // 3. table, queues, topic
    await createServiceTable(dynamo.endpoint, LOCAL_TABLE_NAME);
    // The table's change stream (outbound webhooks), as the CDK stack enables it.
    const tableStreamArn = await enableTableStream(dynamo.endpoint, LOCAL_TABLE_NAME);
    const dlqArns = {} as Record<QueueName, string>;
    const queue = (q: QueueName) => {
      const { fifo, maxReceiveCount } = QUEUES[q];
      const { name, visibilitySeconds } = LOCAL_QUEUES[q];
      const suffix = fifo ? '.fifo' : '';
      const fifoAttributes: Record<string, string> = fifo ? { FifoQueue: 'true' } : {};
      const dead = fauxqs.createQueue(`${name}-dlq${suffix}`, { attributes: fifoAttributes });
      dlqArns[q] = dead.queueArn;
      return fauxqs.createQueue(`${name}${suffix}`, {
        attributes: {
          ...fifoAttributes,
          ...(fifo ? { ContentBasedDeduplication: 'false' } : {}),
          VisibilityTimeout: String(visibilitySeconds),
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dead.queueArn, maxReceiveCount }),
        },
      });
    };
    const queues: Record<QueueName, ReturnType<typeof queue>> = {
      'payout-request-queue': queue('payout-request-queue'),
      'ledger-write-queue': queue('ledger-write-queue'),
      'ledger-receipt-queue': queue('ledger-receipt-queue'),
      'dds-filing-queue': queue('dds-filing-queue'),
      'outbound-webhook-queue': queue('outbound-webhook-queue'),
      'evidence-pin-queue': queue('evidence-pin-queue'),
      'order-work-queue': queue('order-work-queue'),
    };
    const topic = fauxqs.createTopic('coffee-trace-manual-review');
    const notifyQ = fauxqs.createQueue('coffee-trace-manual-review-local-inbox');
    fauxqs.subscribe({ topic: 'coffee-trace-manual-review', queue: 'coffee-trace-manual-review-local-inbox' });
    // SNS here has no SMS: SMS go to a stand-in topic (SMS_TOPIC_ARN) drained into the same file, the number in `phone_number`.
    const smsTopic = fauxqs.createTopic('coffee-trace-sms-local');
    fauxqs.subscribe({ topic: 'coffee-trace-sms-local', queue: 'coffee-trace-manual-review-local-inbox' });

    // 4. the environment every handler reads (as the CDK stack sets it in AWS)
    const port = opts.port;
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: fauxqs.address,
      AWS_ENDPOINT_URL_SNS: fauxqs.address,
      TABLE_NAME: LOCAL_TABLE_NAME,
      ...Object.fromEntries((Object.keys(QUEUES) as QueueName[]).map((q) => [QUEUES[q].urlEnv, queues[q].queueUrl])),
      MANUAL_REVIEW_TOPIC_ARN: topic.topicArn,
      SMS_TOPIC_ARN: smsTopic.topicArn,
      MANUAL_PAYOUT_DAILY_LIMIT_USDC: process.env.MANUAL_PAYOUT_DAILY_LIMIT_USDC || String(DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC),
      PAYOUT_BALANCE_ALARM_USD: process.env.PAYOUT_BALANCE_ALARM_USD || String(DEFAULT_PAYOUT_BALANCE_ALARM_USD),
      LEDGER_RPC_URL: chain.rpcUrl,
      LEDGER_CHAIN_ID: '31337',
      LEDGER_SIGNER_KEY: signerKey,
      // Outbound webhook secrets are sealed with the same envelope code as in AWS, the data keys wrapped by this key file (0600).
      OUTBOUND_SECRET_KEY_FILE: outboundSecretKeyFile(dataDir),
      LEDGER_RPC_RETRY_COUNT: '0',
      BATCH_TOKEN_ADDRESS: contracts.batchTokenAddress,
      TRACE_LOG_ADDRESS: contracts.traceLogAddress,
      AUDIT_ANCHOR_ADDRESS: contracts.auditAnchorAddress,
      LENDING_VAULT_ADDRESS: contracts.lendingVaultAddress,
      VAULT_ASSET_ADDRESS: contracts.vaultAssetAddress,
      PAYOUT_PROVIDER_CREDENTIALS: JSON.stringify(DEV_PROVIDER_CREDENTIALS),
      PAYOUT_WEBHOOK_SECRET: process.env.PAYOUT_WEBHOOK_SECRET || DEV_PAYOUT_WEBHOOK_SECRET,
      CHAIN_WEBHOOK_SECRET: process.env.CHAIN_WEBHOOK_SECRET || DEV_CHAIN_WEBHOOK_SECRET,
      JWT_ISSUER: LOCAL_JWT_ISSUER,
      JWT_AUDIENCE: LOCAL_JWT_AUDIENCE,
      // The scheduled chain watcher's tuning, as in AWS: the local chain never reorganises, and it starts at block 0.
      CHAIN_WATCH_CONFIRMATIONS: process.env.CHAIN_WATCH_CONFIRMATIONS || '0',
      CHAIN_WATCH_START_BLOCK: process.env.CHAIN_WATCH_START_BLOCK || '0',
      // Loan terms as in AWS (setting loanTermDays).
      LOAN_TERM_DAYS: process.env.LOAN_TERM_DAYS || String(DEFAULT_LOAN_TERM_DAYS),
    });
    // Evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url): the uploads bucket on fauxqs's S3, reached as in
    // AWS through the SDK's own endpoint variable (a custom endpoint is addressed path-style).
    fauxqs.createBucket(LOCAL_EVIDENCE_UPLOADS_BUCKET);
    Object.assign(process.env, { AWS_ENDPOINT_URL_S3: fauxqs.address, EVIDENCE_UPLOADS_BUCKET: LOCAL_EVIDENCE_UPLOADS_BUCKET });
    const chainEvents = localChainEventsMode(process.env.LOCAL_CHAIN_EVENTS);
    log(
      `chain events: ${chainEvents === 'webhook' ? 'the local watcher posts signed webhooks to /api/webhooks/chain-events' : 'the scheduled chain-event-watcher function reads the chain (no webhook)'}`,
    );

    // Opt-in metering: wrap every handler and count the SDK commands (off unless the variable is set).
    const meteringFile = process.env.LOCAL_METERING_FILE;
    const meter = meteringFile ? new Meter() : undefined;
    meter?.instrument([DynamoDBClient, SQSClient, SNSClient, SFNClient].map((c) => Object.getPrototypeOf(c.prototype) as object));
    // IAM enforcement (docs/local-iam.md; LOCAL_IAM_ENFORCE=false turns it off): every AWS call a
    // handler makes is evaluated against its function's role in the synthesized CDK template.
    let iam: IamEnforcer | undefined;
    if (localIamEnforced()) {
      iam = await startLocalIam({
        region: 'us-east-1',
        account: '000000000000',
        tableName: LOCAL_TABLE_NAME,
        tableStreamArn,
        dynamoEndpoint: dynamo.endpoint,
        queues: Object.fromEntries((Object.keys(queues) as QueueName[]).map((q) => [q, { arn: queues[q].queueArn, dlqArn: dlqArns[q] }])),
        queueUrls: Object.fromEntries((Object.keys(queues) as QueueName[]).map((q) => [queues[q].queueUrl, q])),
        topicArn: topic.topicArn,
        smsStandInTopicArn: smsTopic.topicArn,
        buckets: { evidence: LOCAL_EVIDENCE_BUCKET, 'evidence-uploads': LOCAL_EVIDENCE_UPLOADS_BUCKET },
        stateMachineArn: LOCAL_STATE_MACHINE_ARN,
        functionArn: FN_ARN,
        s3Endpoint: fauxqs.address,
        log,
      });
    } else log('IAM: not enforced (LOCAL_IAM_ENFORCE=false)');
    const metered = <A extends unknown[], R>(fn: string, h: (...args: A) => Promise<R>, api = false) => {
      const counted = meter ? meter.wrap(fn, h, api) : h;
      return iam ? iam.wrap(fn, counted) : counted;
    };

    // Evidence (docs/api/evidence.md#evidence-on-ipfs): the own copy in a bucket on fauxqs's S3, and the pinning service as a
    // sandbox of an S3-compatible IPFS pinning API (it checks each CAR and answers its root CID),
    // configured with the same variables as in AWS (EVIDENCE_PINNING_API=s3 …).
    fauxqs.createBucket(LOCAL_EVIDENCE_BUCKET);
    fauxqs.createBucket(LOCAL_PINNING_STORAGE_BUCKET);
    const pinning = await startIpfsPinningSandbox({
      bucket: LOCAL_PINNING_BUCKET,
      accessKeyId: DEV_PINNING_CREDENTIALS.access_key_id,
      secretAccessKey: DEV_PINNING_CREDENTIALS.secret_access_key,
      storage: { endpoint: fauxqs.address, bucket: LOCAL_PINNING_STORAGE_BUCKET },
      log: (l) => log(`ipfs-pinning-sandbox: ${l}`),
    });
    stops.push(() => pinning.stop());
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_S3: fauxqs.address,
      EVIDENCE_BUCKET: LOCAL_EVIDENCE_BUCKET,
      EVIDENCE_PINNING_API: 's3',
      EVIDENCE_PINNING_ENDPOINT: pinning.url,
      EVIDENCE_PINNING_BUCKET: LOCAL_PINNING_BUCKET,
      EVIDENCE_PINNING_REGION: 'us-east-1',
      EVIDENCE_PINNING_CREDENTIALS: JSON.stringify(DEV_PINNING_CREDENTIALS),
    });
    // The coffee price feed: $LOCAL_DATA_DIR/price-feed.json, written at start and read at each use (./price-feed-file.ts).
    process.env.PRICE_FEED_FILE = join(dataDir, 'price-feed.json');
    log(`price feed ${process.env.PRICE_FEED_FILE}: ${preparePriceFeedFile(process.env.PRICE_FEED_FILE, new Date(), log)}`);
    // Forest checks against the bundled alert areas, unless a Global Forest Watch key is configured.
    if (!process.env.GFW_API_KEY && !process.env.GFW_API_KEY_SECRET_ARN) useForestCheck(new BundledAlertAreasForestCheck(() => new Date()));

    // 5. the gateway first (its port is in the docs URL and the sandbox's webhook URL)
    const load = async (fn: string) => (await import(`../../functions/${fn}/handler.ts`)) as { handler: unknown };
    let gatewayUrl = '';
    const sandbox = await startPayoutSandbox({
      apiKey: DEV_PROVIDER_CREDENTIALS.api_key,
      apiSecret: DEV_PROVIDER_CREDENTIALS.api_secret,
      webhookUrl: () => `${gatewayUrl}/api/webhooks/payout-provider`,
      webhookSecret: process.env.PAYOUT_WEBHOOK_SECRET!,
      settleMs: opts.settleMs,
      faults: opts.sandboxFaults,
      log: (l) => log(`sandbox: ${l}`),
    });
    stops.push(() => sandbox.stop());
    process.env.PAYOUT_PROVIDER_URL = sandbox.url;
    const pawapay = await startLocalPawaPay(() => `${gatewayUrl}/api/webhooks/pawapay`, opts.settleMs, log);
    stops.push(() => pawapay.stop());
    // The fiat on-ramp (MFI deposits) as a local sandbox of the same HTTP API: it delivers USDC to
    // the treasury (the ledger signer) by minting the local TestUSDC from the dev on-ramp account.
    const onrampWebhookSecret = process.env.ONRAMP_WEBHOOK_SECRET || DEV_ONRAMP_WEBHOOK_SECRET;
    const onramp = await startOnRampSandbox({
      apiKey: DEV_ONRAMP_CREDENTIALS.api_key,
      apiSecret: DEV_ONRAMP_CREDENTIALS.api_secret,
      webhookUrl: () => `${gatewayUrl}/api/webhooks/onramp`,
      webhookSecret: onrampWebhookSecret,
      deliverUsdc: mintingDelivery({
        rpcUrl: chain.rpcUrl,
        chainId: 31337,
        minterKey: devOnRampKey(dataDir),
        usdcAddress: contracts.vaultAssetAddress,
      }),
      log: (l) => log(`onramp: ${l}`),
    });
    stops.push(() => onramp.stop());
    Object.assign(process.env, {
      ONRAMP_URL: onramp.url,
      ONRAMP_CREDENTIALS: JSON.stringify(DEV_ONRAMP_CREDENTIALS),
      ONRAMP_WEBHOOK_SECRET: onrampWebhookSecret,
      LEDGER_TREASURY_ADDRESS: signer.address,
    });
    // The national farmer registry (MAAIF), as a local sandbox of the same HTTP API.
    const maaif = await startFarmerRegistrySandbox({ apiKey: DEV_MAAIF_API_KEY, log: (l) => log(`maaif-sandbox: ${l}`) });
    stops.push(() => maaif.stop());
    Object.assign(process.env, { MAAIF_API_URL: maaif.url, MAAIF_API_KEY: DEV_MAAIF_API_KEY });
    // The EU Information System's DDS service, as a local sandbox speaking the same SOAP protocol.
    const dds = await startDdsRegistrySandbox({
      username: DEV_EUDR_CREDENTIALS.username,
      authKey: DEV_EUDR_CREDENTIALS.authKey,
      clientId: DEV_EUDR_CREDENTIALS.clientId,
      log: (l) => log(`eudr-sandbox: ${l}`),
    });
    stops.push(() => dds.stop());
    Object.assign(process.env, {
      EUDR_DDS_ENDPOINT: dds.url,
      EUDR_USERNAME: DEV_EUDR_CREDENTIALS.username,
      EUDR_AUTH_KEY: DEV_EUDR_CREDENTIALS.authKey,
      EUDR_CLIENT_ID: DEV_EUDR_CREDENTIALS.clientId,
    });

    // 6. Step Functions: the real ASL with the worker functions in process
    const functions: Record<string, (p: unknown) => Promise<unknown>> = {};
    const substitutions: Record<string, string> = {};
    for (const w of workers) {
      if (w.kind !== 'state-machine-task') continue;
      const mod = await load(w.fn);
      substitutions[w.substitution] = FN_ARN(w.fn);
      functions[FN_ARN(w.fn)] = metered(w.fn, (payload: unknown) =>
        (mod.handler as (e: unknown, c: unknown) => Promise<unknown>)(payload, localLambdaContext(w.fn)),
      );
    }
    const sfn = await startLocalStepFunctions({
      name: LOCAL_STATE_MACHINE_NAME,
      definition: readFileSync(join(repoRoot(), 'statemachines', 'payout-lifecycle.asl.json'), 'utf8'),
      substitutions,
      functions,
      timeScale,
      log: (l) => log(`states: ${l}`),
    });
    stops.push(() => sfn.stop());
    if (sfn.stateMachineArn !== LOCAL_STATE_MACHINE_ARN)
      throw new Error(`the local state machine is ${sfn.stateMachineArn}, IAM enforcement expected ${LOCAL_STATE_MACHINE_ARN}`);
    Object.assign(process.env, { AWS_ENDPOINT_URL_SFN: sfn.url, PAYOUT_STATE_MACHINE_ARN: sfn.stateMachineArn });

    const jwks = JSON.stringify(await localJwks(dataDir));
    const authorizer = metered(AUTHORIZER_FN, (await load(AUTHORIZER_FN)).handler as AuthorizerHandler);
    const meterSnapshot = () => {
      let transitions = 0;
      let running = 0;
      const all = [...sfn.executions().values()];
      for (const e of all) {
        if (e.status === 'RUNNING') running++;
        for (const h of e.history) if (h.type === 'StateEntered' || h.type === 'StateRetried') transitions++;
      }
      return meter!.snapshot({ transitions, started: all.length, running });
    };
    const gateway = await startGateway({
      port,
      routes,
      loadHandler: async (fn) => metered(fn, (await load(fn)).handler as ProxyHandler, true),
      authorizer,
      extraRoutes: {
        '/.well-known/jwks.json': (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(jwks);
        },
        ...(meter
          ? {
              '/__local/metering': (
                _req: unknown,
                res: { writeHead(s: number, h: Record<string, string>): void; end(b: string): void },
              ) => {
                res.writeHead(200, { 'content-type': 'application/json' });
                res.end(JSON.stringify(meterSnapshot()));
              },
            }
          : {}),
      },
      // The evidence (own copy) through the get-ipfs function, so anyone can fetch the bytes and recompute the CID.
      extraPrefixes: {
        [IPFS_PATH_PREFIX]: ipfsGatewayHandler(
          async () => metered('get-ipfs', (await load('get-ipfs')).handler as ProxyHandler, true) as never,
        ),
      },
      rateLimit: { rate: Number(process.env.LOCAL_RATE_LIMIT_RPS ?? 50), burst: Number(process.env.LOCAL_RATE_LIMIT_BURST ?? 100) },
      log: (l) => log(`gateway: ${l}`),
    });
    gatewayUrl = gateway.url;
    // The chain-event provider's stand-in (LOCAL_CHAIN_EVENTS=webhook, the default): TraceLog stage
    // events and the vault's buyer payments → signed webhooks to the gateway. With `scheduled` the
    // chain-event-watcher function reads the chain on its schedule instead (below), as in AWS.
    if (chainEvents === 'webhook') {
      const watcher = startChainWatcher({
        rpcUrl: chain.rpcUrl,
        chainId: 31337,
        traceLogAddress: contracts.traceLogAddress,
        batchTokenAddress: contracts.batchTokenAddress,
        lendingVaultAddress: contracts.lendingVaultAddress,
        webhookUrl: () => `${gatewayUrl}/api/webhooks/chain-events`,
        secret: process.env.CHAIN_WEBHOOK_SECRET!,
        log: (l) => log(`chain-watcher: ${l}`),
      });
      stops.push(() => watcher.stop());
    }
    process.env.JWKS_URL = `${gateway.url}/.well-known/jwks.json`;
    // Every link the service prints starts with PUBLIC_BASE_URL: the printed URL of this stack,
    // unless set (e.g. a tunnel's https URL); checked now so a bad value stops the start.
    process.env.SERVICE_RUNTIME = 'local';
    process.env.PUBLIC_BASE_URL = checkPublicBaseUrl(process.env.PUBLIC_BASE_URL || gateway.url, 'local');
    process.env.DOCS_BASE_URL = `${process.env.PUBLIC_BASE_URL}/docs`;
    process.env.IPFS_GATEWAY_URL = gateway.url;
    stops.push(() => gateway.stop());

    // Every variable the functions' needs declare (shared/manifest.ts) must be set by now: the
    // local stand-in for what CDK sets per function in AWS.
    const missing = missingLocalEnvironment(process.env);
    if (missing.length > 0) {
      throw new Error(
        `the local stack does not set ${missing.length} variable(s) the manifest's needs declare: ${missing.map((m) => `${m.variable} (need ${m.need}: ${m.functions.join(', ')})`).join('; ')}`,
      );
    }

    // 7. event sources: queue consumers (which queues feed which consumer, its batch size: the manifest's, as in CDK) and the notification inbox
    for (const w of workers) {
      if (w.kind !== 'queue-consumer') continue;
      const consume = (await load(w.fn)).handler as (e: unknown, c: unknown) => Promise<never>;
      const handler = metered(w.fn, (e: never) => consume(e, localLambdaContext(w.fn))) as never;
      stops.push(...pollConsumer(w, queues, (q) => LOCAL_QUEUES[q].visibilitySeconds, handler, log));
    }
    // Table-stream consumers (DynamoDB Streams event sources in AWS): a poller of DynamoDB Local's stream.
    // Outbound webhooks may go to loopback http receivers here, and their retry schedule is scaled.
    Object.assign(process.env, { OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK: 'true', OUTBOUND_WEBHOOK_TIME_SCALE: String(timeScale) });
    for (const w of workers) {
      if (w.kind !== 'table-stream-consumer') continue;
      const mod = await load(w.fn);
      const consume = mod.handler as (e: unknown, c: unknown) => Promise<never>;
      const poller = pollTableStream({
        endpoint: dynamo.endpoint,
        streamArn: tableStreamArn,
        batchSize: w.batchSize,
        entities: w.entities,
        handler: metered(w.fn, (e: never) => consume(e, localLambdaContext(w.fn))) as never,
        log: (l) => log(`${w.fn}: ${l}`),
      });
      stops.push(() => poller.stop());
    }
    // Scheduled workers (EventBridge in AWS): a timer, with the schedule and the staleness
    // threshold scaled by LOCAL_TIME_SCALE.
    process.env.RECONCILE_AFTER_SECONDS ??= String(300 * timeScale);
    // The DDS filer's first status poll after a submission or amendment, scaled the same way.
    process.env.DDS_POLL_DELAY_S ??= String(10 * timeScale);
    for (const w of workers) {
      if (w.kind !== 'scheduled') continue;
      if (w.fn === CHAIN_WATCHER_FN && chainEvents !== 'scheduled') continue; // the webhook-posting watcher reports chain events instead
      const mod = await load(w.fn);
      const scheduled = mod.handler as (e: unknown, c: unknown) => Promise<unknown>;
      const run = metered(w.fn, () => scheduled({}, localLambdaContext(w.fn)));
      // A worker's interval setting (e.g. ANCHOR_INTERVAL_S) overrides its schedule, in seconds, scaled as well.
      const intervalSetting = w.intervalVariable ? process.env[w.intervalVariable]?.trim() : undefined;
      if (intervalSetting && !(Number(intervalSetting) > 0))
        throw new Error(`${w.intervalVariable} must be a positive number of seconds, got ${intervalSetting}`);
      const everyMs = Math.max(200, (intervalSetting ? Number(intervalSetting) * 1000 : scheduleMs(w.schedule)) * timeScale);
      let running = false;
      const timer = setInterval(() => {
        if (running) return;
        running = true;
        run()
          .then(
            (r) => log(`${w.fn}: ${JSON.stringify(r)}`),
            (err) => log(`${w.fn} failed: ${(err as Error).message}`),
          )
          .finally(() => (running = false));
      }, everyMs);
      stops.push(async () => clearInterval(timer));
    }

    const notifications = join(dataDir, 'notifications.jsonl');
    const inbox = drainNotifications(notifyQ.queueUrl, notifications, topic.topicArn);
    stops.push(() => inbox.stop());
    if (meter && meteringFile) {
      meter.ignoreQueue(notifyQ.queueUrl); // the local SNS subscriber is a stand-in, not billed traffic
      stops.push(async () => writeFileSync(meteringFile, JSON.stringify(meterSnapshot(), null, 2))); // runs first (stops run in reverse)
    }

    const endpoints = {
      dynamodb: dynamo.endpoint,
      ledger: chain.rpcUrl,
      sqs_sns: fauxqs.address,
      stepfunctions: sfn.url,
      payout_sandbox: sandbox.url,
      pawapay_sandbox: pawapay.url,
      onramp_sandbox: onramp.url,
      eudr_sandbox: dds.url,
      maaif_sandbox: maaif.url,
      ipfs_pinning_sandbox: pinning.url,
      batch_token: contracts.batchTokenAddress,
      trace_log: contracts.traceLogAddress,
      audit_anchor: contracts.auditAnchorAddress,
      lending_vault: contracts.lendingVaultAddress,
      vault_asset: contracts.vaultAssetAddress,
    };
    // For local tools (npm run verify): where this stack's API and chain are.
    writeLocalStackFile(dataDir, { url: gateway.url, endpoints, chain_id: 31337 });
    return {
      url: gateway.url,
      dataDir,
      endpoints,
      sandbox,
      pawapay,
      stepFunctions: sfn,
      pids: { dynamodb: dynamo.pid, hardhat: chain.pid },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Milliseconds of an EventBridge `rate(N unit)` expression. */
function scheduleMs(expression: string): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!m) throw new Error(`unsupported schedule ${expression} (use rate(N minutes|hours|days))`);
  const unit = m[2]!.startsWith('minute') ? 60_000 : m[2]!.startsWith('hour') ? 3_600_000 : 86_400_000;
  return Number(m[1]) * unit;
}
