/**
 * Turns manifest `Need`s (shared/manifest.ts) into environment variables and IAM grants: a
 * function gets exactly what its route or worker declares, and nothing more.
 *
 * The variable *names* and the secrets each need carries come from the manifest's `NEEDS` (the
 * contract with `shared/config.ts`: `requireEnv(NAME)`, and `secret(NAME)` which reads
 * `NAME_SECRET_ARN`); this module supplies their values and the grants.
 */
import { Names, Stack, Validations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnBucket, IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { StateMachine, type IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { NEEDS, QUEUES, type Need, type NeedEnvName, type SecretName, type SecretSpec } from '../../shared/manifest';
import type { ServiceFunction } from './service-function';
import type { Settings } from './settings';
import { GSI1, GSI2, type StatefulResources } from './stateful-resources';
import { EVIDENCE_UPLOADS_PREFIX, type EvidenceUploads } from './evidence-uploads';
import { keys } from '../../shared/adapters/dynamodb/keys';
import { DDS_DOCUMENTS_PREFIX } from '../../shared/adapters/aws/s3-dds-documents';

/**
 * Table reads: point reads and queries (table, GSI1, GSI2); no Scan. BatchGetItem is its own need
 * (`table:batch-read`): the audit anchorer, and the settlement and the order worker reading a
 * purchase order's batches and loans.
 */
const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query'];

/**
 * Table writes: reads plus conditional puts and updates. Transactions (TransactWriteItems) are
 * authorised per contained operation, so Put/Update/ConditionCheck cover them.
 */
const TABLE_WRITE_ACTIONS = [...TABLE_READ_ACTIONS, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'];

/**
 * Denied to every function: nothing in the service deletes an item (expiry is DynamoDB TTL, which
 * IAM does not govern). BatchWriteItem and PartiQL deletes are denied too because they can delete.
 */
export const TABLE_DENIED_ACTIONS = ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:PartiQLDelete'];

/**
 * Audit entries (`PK = AUDIT#<batch_id>`, shared/adapters/dynamodb/keys.ts) are append-only
 * (hash-chained): they are put once with attribute_not_exists, and no function may update or
 * delete them. Only functions with the `audit:append` need may put them at all.
 */
const AUDIT_PARTITION_PATTERN = `${keys.auditPartition('')}*`;

/** Every action that can write an item: denied on `AUDIT#*` to roles without `audit:append`. */
const ITEM_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:PartiQLInsert',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
];

/** Denied on `AUDIT#*` even to appenders: an entry, once put, never changes. */
const AUDIT_APPENDER_DENIED_ACTIONS = ['dynamodb:UpdateItem', 'dynamodb:PartiQLUpdate'];

/**
 * The only items any function may delete, by the need that allows it (DeleteItem with every
 * `dynamodb:LeadingKeys` matching these patterns; denied anywhere else):
 *
 * - `payout:discard`: a payout whose provider order could not be placed, and its (batch, reason)
 *   guard, removed together so the caller can simply retry (`PROVIDER_UNAVAILABLE` leaves no
 *   payout behind). Payouts and MFI deposits share the `PAYMENT#` partition prefix, so the
 *   pattern names the payout id formats (shared/domain/ids.ts): farmer payouts `PAY-…` and loan
 *   disbursements `DISB-…`; a deposit `PAYMENT#DEP-…` can never be deleted. A `LeadingKeys`
 *   condition sees the partition key only, and the id is part of it, so this is expressible
 *   exactly. (That the payout is still PENDING is the adapter's condition expression, not IAM's.)
 * - `loan-guard:release`: a loan's batch guard (`LOAN_GUARD#<batch>`), removed in the same
 *   transaction that moves the loan to REPAID or CANCELLED (`LoanRepository.transition`), so the
 *   batch can be lent against again. Only the single ledger writer settles loans.
 *
 * The guard is kept as a delete (not a status update) because its absence is what the loan's
 * creation checks with attribute_not_exists; releasing it by update would change that contract
 * for every reader.
 */
const DELETABLE_PARTITIONS = {
  'payout:discard': [`${keys.payment('PAY-').PK}*`, `${keys.payment('DISB-').PK}*`, `${keys.payoutGuard('', '').PK.replace(/#+$/, '#')}*`],
  'loan-guard:release': [`${keys.loanGuard('').PK}*`],
} as const satisfies Partial<Record<Need, readonly string[]>>;

/** The deletable partition patterns of `needs` (empty: the role may delete nothing). */
export function deletablePartitions(needs: Iterable<Need>): string[] {
  const out = new Set<string>();
  for (const n of needs) for (const p of (DELETABLE_PARTITIONS as Partial<Record<Need, readonly string[]>>)[n] ?? []) out.add(p);
  return [...out];
}

/** What `bindNeeds` wires functions to. */
export interface NeedTargets {
  stateful: StatefulResources;
  settings: Settings;
  /** ARN of the payout state machine, built from its fixed name (so functions it invokes can hold it without a cycle). */
  payoutStateMachineArn: string;
  /** The evidence uploads bucket (docs/api/evidence.md#evidence-photos-by-upload-url; ./evidence-uploads.ts). */
  evidenceUploads: EvidenceUploads;
  /** The own copy of evidence (./evidence-store.ts). */
  evidenceBucket: IBucket;
}

/**
 * Sets the environment and grants of `needs` on `target`; denies every function item deletion
 * outside its needs' `DELETABLE_PARTITIONS`, every write of audit entries without `audit:append`,
 * and updates of audit entries to all.
 */
export function bindNeeds(target: ServiceFunction, needs: Iterable<Need>, t: NeedTargets): void {
  const { fn, role } = target;
  const { stateful: s } = t;
  const tableResources = [s.table.tableArn, `${s.table.tableArn}/index/${GSI1}`, `${s.table.tableArn}/index/${GSI2}`];
  let sm: IStateMachine | undefined;
  const payoutStateMachine = (): IStateMachine =>
    (sm ??= StateMachine.fromStateMachineArn(target, 'PayoutStateMachineRef', t.payoutStateMachineArn));

  const needSet = new Set(needs);
  const deletable = deletablePartitions(needSet);
  if (deletable.length > 0) {
    // Deletes only where the role's needs allow: allowed when every leading key matches, denied when any does not.
    role.addToPrincipalPolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        actions: TABLE_DENIED_ACTIONS.filter((a) => a !== 'dynamodb:DeleteItem'),
        resources: tableResources,
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        actions: ['dynamodb:DeleteItem'],
        resources: tableResources,
        conditions: { 'ForAnyValue:StringNotLike': { 'dynamodb:LeadingKeys': deletable } },
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:DeleteItem'],
        resources: [s.table.tableArn],
        // ForAllValues is true for a request without the key: require it (every DeleteItem carries it).
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': deletable }, Null: { 'dynamodb:LeadingKeys': 'false' } },
      }),
    );
  } else {
    role.addToPrincipalPolicy(new PolicyStatement({ effect: Effect.DENY, actions: TABLE_DENIED_ACTIONS, resources: tableResources }));
  }
  role.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.DENY,
      actions: needSet.has('audit:append') ? AUDIT_APPENDER_DENIED_ACTIONS : ITEM_WRITE_ACTIONS,
      resources: tableResources,
      conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [AUDIT_PARTITION_PATTERN] } },
    }),
  );

  const values = needEnvValues(t);
  const secrets = needSecrets(s);
  for (const need of needSet) {
    // Names from the manifest, values from the stack.
    for (const name of NEEDS[need].env as readonly NeedEnvName[]) fn.addEnvironment(name, values[name]);
    for (const sec of NEEDS[need].secrets as readonly SecretSpec[]) {
      const resource = secrets[sec.name as SecretName];
      fn.addEnvironment(sec.arnVariable, resource.secretArn);
      resource.grantRead(role);
    }
    // Grants beyond environment and secrets.
    switch (need) {
      case 'payout:discard':
      case 'loan-guard:release':
      case 'audit:append':
        break; // granted above (deletes and audit entries)
      case 'table:read':
        role.addToPrincipalPolicy(new PolicyStatement({ actions: TABLE_READ_ACTIONS, resources: tableResources }));
        break;
      case 'table:write':
        role.addToPrincipalPolicy(new PolicyStatement({ actions: TABLE_WRITE_ACTIONS, resources: tableResources }));
        break;
      case 'table:batch-read':
        role.addToPrincipalPolicy(new PolicyStatement({ actions: ['dynamodb:BatchGetItem'], resources: [s.table.tableArn] }));
        break;
      case 'payout-state-machine:start':
        payoutStateMachine().grantStartExecution(role);
        break;
      case 'payout-state-machine:callback':
        payoutStateMachine().grantTaskResponse(role);
        break;
      case 'payout-request-queue:send':
      case 'ledger-write-queue:send':
      case 'ledger-receipt-queue:send':
      case 'dds-filing-queue:send':
      case 'outbound-webhook-queue:send':
      case 'evidence-pin-queue:send':
      case 'order-work-queue:send':
        s.queues[queueOfSendNeed(need)].grantSendMessages(role);
        break;
      case 'pin-store':
      case 'evidence-archive:read':
      case 'evidence-files:read':
      case 'dds-documents:write':
      case 'dds-documents:read': {
        // The own copy of evidence: car/<cid>.car and files/<cid>/<name>. Keeping evidence only puts both
        // (and queues pin jobs); reading CARs gets car/ (audits, the pinner, GET /ipfs); files/ are read
        // only through presigned GETs (GET /ipfs/{cid}/{name}), which act with the presigner's rights.
        // Readers may list their prefix, so a missing object is a 404, not a 403. Statements' documents
        // (personal data: full names, exact plots) are under dds/, which no evidence need reaches.
        const grant = {
          'pin-store': { actions: ['s3:PutObject'], prefixes: ['car/', 'files/'], list: false },
          'evidence-archive:read': { actions: ['s3:GetObject'], prefixes: ['car/'], list: true },
          'evidence-files:read': { actions: ['s3:GetObject'], prefixes: ['files/'], list: true },
          'dds-documents:write': { actions: ['s3:PutObject'], prefixes: [DDS_DOCUMENTS_PREFIX], list: false },
          'dds-documents:read': { actions: ['s3:GetObject'], prefixes: [DDS_DOCUMENTS_PREFIX], list: true },
        }[need];
        role.addToPrincipalPolicy(
          new PolicyStatement({ actions: grant.actions, resources: grant.prefixes.map((p) => t.evidenceBucket.arnForObjects(`${p}*`)) }),
        );
        if (grant.list)
          role.addToPrincipalPolicy(
            new PolicyStatement({
              actions: ['s3:ListBucket'],
              resources: [t.evidenceBucket.bucketArn],
              conditions: { StringLike: { 's3:prefix': grant.prefixes.map((p) => `${p}*`) } },
            }),
          );
        if (need === 'pin-store') s.queues['evidence-pin-queue'].grantSendMessages(role);
        const bucketArn = nagArnName(role, t.evidenceBucket.node.defaultChild as CfnBucket);
        for (const p of grant.prefixes) {
          Validations.of(role).acknowledge({
            // cdk-nag names the finding by the bucket's ARN reference: AwsSolutions-IAM5[Resource::<EvidenceBucket….Arn>/car/*].
            id: `AwsSolutions-IAM5[Resource::<${bucketArn}>/${p}*]`,
            reason: `Evidence objects are keyed by CID (car/<cid>.car, files/<cid>/<name>) and statements' documents by statement and SHA-256 (dds/<dds_id>/<sha256>.json), known only at run time: an object ARN with the ${p} prefix (and s3:ListBucket limited to the prefix for readers, so a missing object is a 404, not a 403) is as narrow as S3 allows.`,
          });
        }
        break;
      }
      case 'manual-review-topic:publish':
        // Not grantPublish: with the AWS managed key (alias/aws/sns) it would add kms:GenerateDataKey*
        // and kms:Decrypt on every key of the account, which that key's own policy makes unnecessary
        // (it lets any principal of the account use the key through SNS).
        role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sns:Publish'], resources: [s.manualReviewTopic.topicArn] }));
        break;
      case 'sms:send':
        // Direct SMS has no topic ARN: publishing to a phone number only (any resource that is not an SNS topic or application).
        role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sns:Publish'], notResources: ['arn:aws:sns:*:*:*'] }));
        break;
      case 'manual-payout-limit':
      case 'payout-balance-alarm':
        break; // a setting only
      case 'evidence-uploads:presign':
      case 'evidence-uploads:read': {
        // Exactly PutObject (presigned URLs act with this role's rights) or GetObject, under the uploads prefix only.
        const action = need === 'evidence-uploads:presign' ? 's3:PutObject' : 's3:GetObject';
        role.addToPrincipalPolicy(
          new PolicyStatement({ actions: [action], resources: [t.evidenceUploads.bucket.arnForObjects(`${EVIDENCE_UPLOADS_PREFIX}*`)] }),
        );
        if (need === 'evidence-uploads:read') {
          // Without ListBucket S3 answers 403, not 404, for an upload that never arrived: the reader must see
          // "missing" (EVIDENCE_UPLOAD_INVALID), not an error. Listing is limited to the uploads prefix.
          role.addToPrincipalPolicy(
            new PolicyStatement({
              actions: ['s3:ListBucket'],
              resources: [t.evidenceUploads.bucket.bucketArn],
              conditions: { StringLike: { 's3:prefix': [`${EVIDENCE_UPLOADS_PREFIX}*`] } },
            }),
          );
        }
        Validations.of(role).acknowledge({
          // cdk-nag names the finding by the bucket's ARN reference: AwsSolutions-IAM5[Resource::<EvidenceUploadsBucket….Arn>/evidence-uploads/*].
          id: `AwsSolutions-IAM5[Resource::<${nagArnName(role, t.evidenceUploads.bucket.node.defaultChild as CfnBucket)}>/${EVIDENCE_UPLOADS_PREFIX}*]`,
          reason: `${action} on the evidence uploads bucket's objects under ${EVIDENCE_UPLOADS_PREFIX} (keys are <batch_id>/<upload_id>, made at request time): an object ARN with a key prefix is as narrow as S3 allows.`,
        });
        break;
      }
      case 'ledger':
      case 'vault':
        // The ledger signer signs in KMS: only functions that send ledger transactions (the single ledger writer) may use it.
        role.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['kms:Sign', 'kms:GetPublicKey'], resources: [s.ledgerSignerKmsKey.keyArn] }),
        );
        break;
      case 'outbound-secrets:seal':
        // Data keys for new secrets only, and only bound to an endpoint id (the encryption context the sealer uses).
        role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['kms:GenerateDataKey'],
            resources: [s.outboundSecretsKey.keyArn],
            conditions: {
              'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['endpoint_id'] },
              Null: { 'kms:EncryptionContext:endpoint_id': 'false' },
            },
          }),
        );
        break;
      case 'outbound-secrets:open':
        role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['kms:Decrypt'],
            resources: [s.outboundSecretsKey.keyArn],
            conditions: {
              'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['endpoint_id'] },
              Null: { 'kms:EncryptionContext:endpoint_id': 'false' },
            },
          }),
        );
        break;
      case 'ledger:read':
      case 'vault:read':
      case 'chain-webhook-secret':
      case 'evidence-pinning':
      case 'maaif':
      case 'gfw':
      case 'eudr-registry':
      case 'payout-provider':
      case 'payout-webhook-secret':
      case 'token-issuer':
      case 'onramp':
      case 'onramp-webhook-secret':
      case 'price-feed':
      case 'outbound-webhooks':
      case 'chain-watch':
      case 'loan-terms':
        break; // outside systems: environment and secret reads only
      default: {
        const unknown: never = need;
        throw new Error(`bindNeeds: no wiring for need ${String(unknown)}`);
      }
    }
  }
}

/** `payout-request-queue:send` → `payout-request-queue`. */
function queueOfSendNeed(need: `${keyof typeof QUEUES}:send`): keyof typeof QUEUES {
  return need.slice(0, -':send'.length) as keyof typeof QUEUES;
}

/**
 * The value of every variable the manifest's needs name. Typed by the manifest: a name added to
 * `NEEDS` without a value here (or a value for a name no need declares) does not compile.
 */
function needEnvValues(t: NeedTargets): Record<NeedEnvName, string> {
  const { stateful: s, settings } = t;
  return {
    TABLE_NAME: s.table.tableName,
    EVIDENCE_UPLOADS_BUCKET: t.evidenceUploads.bucket.bucketName,
    PAYOUT_STATE_MACHINE_ARN: t.payoutStateMachineArn,
    [QUEUES['payout-request-queue'].urlEnv]: s.queues['payout-request-queue'].queueUrl,
    [QUEUES['ledger-write-queue'].urlEnv]: s.queues['ledger-write-queue'].queueUrl,
    [QUEUES['ledger-receipt-queue'].urlEnv]: s.queues['ledger-receipt-queue'].queueUrl,
    [QUEUES['dds-filing-queue'].urlEnv]: s.queues['dds-filing-queue'].queueUrl,
    [QUEUES['outbound-webhook-queue'].urlEnv]: s.queues['outbound-webhook-queue'].queueUrl,
    [QUEUES['evidence-pin-queue'].urlEnv]: s.queues['evidence-pin-queue'].queueUrl,
    [QUEUES['order-work-queue'].urlEnv]: s.queues['order-work-queue'].queueUrl,
    EVIDENCE_BUCKET: t.evidenceBucket.bucketName,
    MANUAL_REVIEW_TOPIC_ARN: s.manualReviewTopic.topicArn,
    LEDGER_RPC_URL: settings.ledgerRpcUrl,
    LEDGER_CHAIN_ID: settings.ledgerChainId,
    BATCH_TOKEN_ADDRESS: settings.batchTokenAddress,
    TRACE_LOG_ADDRESS: settings.traceLogAddress,
    AUDIT_ANCHOR_ADDRESS: settings.auditAnchorAddress,
    LENDING_VAULT_ADDRESS: settings.lendingVaultAddress,
    VAULT_ASSET_ADDRESS: settings.vaultAssetAddress,
    PAYOUT_PROVIDER_URL: settings.payoutProviderUrl,
    PAYOUT_PROVIDERS: settings.payoutProviders,
    PAWAPAY_API_URL: settings.pawapayApiUrl,
    PAWAPAY_USD_UGX_RATE: settings.pawapayUsdUgxRate,
    EVIDENCE_PINNING_API: settings.evidencePinningApi,
    EVIDENCE_PINNING_ENDPOINT: settings.evidencePinningEndpoint,
    EVIDENCE_PINNING_BUCKET: settings.evidencePinningBucket,
    EVIDENCE_PINNING_REGION: settings.evidencePinningRegion,
    GFW_API_URL: settings.gfwApiUrl,
    MAAIF_API_URL: settings.maaifApiUrl,
    EUDR_DDS_ENDPOINT: settings.eudrDdsEndpoint,
    EUDR_USERNAME: settings.eudrUsername,
    EUDR_CLIENT_ID: settings.eudrClientId,
    PRICE_FEED_URL: settings.priceFeedUrl,
    ONRAMP_URL: settings.onrampUrl,
    LEDGER_TREASURY_ADDRESS: settings.treasuryAddress,
    JWT_ISSUER: settings.jwtIssuer,
    JWT_AUDIENCE: settings.jwtAudience,
    JWKS_URL: settings.jwksUrl,
    CHAIN_WATCH_CONFIRMATIONS: settings.chainWatchConfirmations,
    CHAIN_WATCH_START_BLOCK: settings.chainWatchStartBlock,
    MANUAL_PAYOUT_DAILY_LIMIT_USDC: settings.manualPayoutDailyLimitUsdc,
    PAYOUT_BALANCE_ALARM_USD: String(settings.payoutBalanceAlarmUsd),
    LEDGER_SIGNER_KMS_KEY_ID: s.ledgerSignerKmsKey.keyArn,
    OUTBOUND_SECRET_KMS_KEY_ID: s.outboundSecretsKey.keyArn,
    LOAN_TERM_DAYS: settings.loanTermDays,
  };
}

/** The Secrets Manager secret of every secret the manifest's needs carry. */
function needSecrets(s: StatefulResources): Record<SecretName, ISecret> {
  return {
    PAYOUT_PROVIDER_CREDENTIALS: s.payoutProviderCredentials,
    PAWAPAY_CREDENTIALS: s.pawapayCredentials,
    PAYOUT_WEBHOOK_SECRET: s.payoutWebhookSecret,
    CHAIN_WEBHOOK_SECRET: s.chainWebhookSecret,
    EVIDENCE_PINNING_CREDENTIALS: s.pinningServiceToken,
    GFW_API_KEY: s.gfwApiKey,
    MAAIF_API_KEY: s.maaifApiKey,
    ONRAMP_CREDENTIALS: s.onrampCredentials,
    ONRAMP_WEBHOOK_SECRET: s.onrampWebhookSecret,
    PRICE_FEED_TOKEN: s.priceFeedToken,
    EUDR_AUTH_KEY: s.eudrAuthKey,
  };
}

/**
 * How cdk-nag names a bucket's ARN in a policy of `role`: `<logical id>.Arn` when both are in one
 * template; else the parameter CDK passes the ARN through to the role's nested stack (the functions
 * of an area, infra/stack/function-areas.ts): `referenceto<the bucket's unique id>Arn`, as CDK names
 * it (`reference-to-` + the target's unique id + the attribute, non-alphanumerics removed).
 */
function nagArnName(role: Construct, bucket: CfnBucket): string {
  const stack = Stack.of(role);
  if (stack === Stack.of(bucket)) return `${stack.resolve(stack.getLogicalId(bucket)) as string}.Arn`;
  return `reference-to-${Names.nodeUniqueId(bucket.node)}Arn`.replace(/[^A-Za-z0-9]/g, '');
}
