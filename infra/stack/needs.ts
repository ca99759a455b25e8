/**
 * Turns routes.ts `Need`s into environment variables and IAM grants: a function gets exactly
 * what its route or worker declares, and nothing more.
 *
 * Environment variable names are the contract with `shared/config.ts` (`requireEnv`, and
 * `secret(NAME)` which reads `NAME_SECRET_ARN`).
 */
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { StateMachine, type IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Need } from '../../shared/http/routes';
import type { ServiceFunction } from './service-function';
import type { Settings } from './settings';
import { GSI1, GSI2, type StatefulResources } from './stateful-resources';

/** Table reads: point reads and queries (table, GSI1, GSI2); no Scan. */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];

/**
 * Table writes: reads plus conditional puts and updates. Transactions (TransactWriteItems) are
 * authorised per contained operation, so Put/Update/ConditionCheck cover them.
 */
export const TABLE_WRITE_ACTIONS = [...TABLE_READ_ACTIONS, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'];

/**
 * Denied to every function: nothing in the service deletes an item (expiry is DynamoDB TTL, which
 * IAM does not govern). BatchWriteItem and PartiQL deletes are denied too because they can delete.
 */
export const TABLE_DENIED_ACTIONS = ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:PartiQLDelete'];

/**
 * Audit entries (`PK = AUDIT#<batch_id>`, shared/adapters/dynamodb/keys.ts) are append-only
 * (decisions §8 hash chain): they are put once with attribute_not_exists, and no function may
 * update them.
 */
export const AUDIT_PARTITION_PATTERN = 'AUDIT#*';

/**
 * The only items any function may delete: a payout whose provider order could not be placed, and
 * its (batch, reason) guard, removed together so the caller can simply retry (decisions §7,
 * `PROVIDER_UNAVAILABLE` leaves no payout behind). Functions with the `payout:discard` need may
 * delete in these partitions and nowhere else.
 */
export const DISCARDABLE_PARTITION_PATTERNS = ['PAYMENT#*', 'PAYOUT_GUARD#*'];

/** What `bindNeeds` wires functions to. */
export interface NeedTargets {
  stateful: StatefulResources;
  settings: Settings;
  /** ARN of the payout state machine, built from its fixed name (so functions it invokes can hold it without a cycle). */
  payoutStateMachineArn: string;
}

/**
 * Sets the environment and grants of `needs` on `target`, and denies every function item deletion
 * and updates of audit entries.
 */
export function bindNeeds(target: ServiceFunction, needs: Iterable<Need>, t: NeedTargets): void {
  const { fn, role } = target;
  const { stateful: s, settings } = t;
  const tableResources = [s.table.tableArn, `${s.table.tableArn}/index/${GSI1}`, `${s.table.tableArn}/index/${GSI2}`];
  let sm: IStateMachine | undefined;
  const payoutStateMachine = (): IStateMachine =>
    (sm ??= StateMachine.fromStateMachineArn(target, 'PayoutStateMachineRef', t.payoutStateMachineArn));

  const needSet = new Set(needs);
  if (needSet.has('payout:discard')) {
    role.addToPrincipalPolicy(new PolicyStatement({ effect: Effect.DENY, actions: TABLE_DENIED_ACTIONS.filter((a) => a !== 'dynamodb:DeleteItem'), resources: tableResources }));
    role.addToPrincipalPolicy(new PolicyStatement({
      effect: Effect.DENY,
      actions: ['dynamodb:DeleteItem'],
      resources: tableResources,
      conditions: { 'ForAnyValue:StringNotLike': { 'dynamodb:LeadingKeys': DISCARDABLE_PARTITION_PATTERNS } },
    }));
    role.addToPrincipalPolicy(new PolicyStatement({
      actions: ['dynamodb:DeleteItem'],
      resources: [s.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': DISCARDABLE_PARTITION_PATTERNS } },
    }));
  } else {
    role.addToPrincipalPolicy(new PolicyStatement({ effect: Effect.DENY, actions: TABLE_DENIED_ACTIONS, resources: tableResources }));
  }
  role.addToPrincipalPolicy(new PolicyStatement({
    effect: Effect.DENY,
    actions: ['dynamodb:UpdateItem', 'dynamodb:PartiQLUpdate'],
    resources: tableResources,
    conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [AUDIT_PARTITION_PATTERN] } },
  }));

  for (const need of needSet) {
    switch (need) {
      case 'payout:discard':
        break; // granted above
      case 'table:read':
        fn.addEnvironment('TABLE_NAME', s.table.tableName);
        role.addToPrincipalPolicy(new PolicyStatement({ actions: TABLE_READ_ACTIONS, resources: tableResources }));
        break;
      case 'table:write':
        fn.addEnvironment('TABLE_NAME', s.table.tableName);
        role.addToPrincipalPolicy(new PolicyStatement({ actions: TABLE_WRITE_ACTIONS, resources: tableResources }));
        break;
      case 'payout-state-machine:start':
        fn.addEnvironment('PAYOUT_STATE_MACHINE_ARN', t.payoutStateMachineArn);
        payoutStateMachine().grantStartExecution(role);
        break;
      case 'payout-state-machine:callback':
        fn.addEnvironment('PAYOUT_STATE_MACHINE_ARN', t.payoutStateMachineArn);
        payoutStateMachine().grantTaskResponse(role);
        break;
      case 'payout-request-queue:send':
        fn.addEnvironment('PAYOUT_REQUEST_QUEUE_URL', s.queues['payout-request-queue'].queueUrl);
        s.queues['payout-request-queue'].grantSendMessages(role);
        break;
      case 'manual-review-topic:publish':
        fn.addEnvironment('MANUAL_REVIEW_TOPIC_ARN', s.manualReviewTopic.topicArn);
        // Not grantPublish: with the AWS managed key (alias/aws/sns) it would add kms:GenerateDataKey*
        // and kms:Decrypt on every key of the account, which that key's own policy makes unnecessary
        // (it lets any principal of the account use the key through SNS).
        role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sns:Publish'], resources: [s.manualReviewTopic.topicArn] }));
        break;
      case 'ledger':
        fn.addEnvironment('LEDGER_RPC_URL', settings.ledgerRpcUrl);
        fn.addEnvironment('LEDGER_CHAIN_ID', settings.ledgerChainId);
        fn.addEnvironment('BATCH_TOKEN_ADDRESS', settings.batchTokenAddress);
        fn.addEnvironment('TRACE_LOG_ADDRESS', settings.traceLogAddress);
        fn.addEnvironment('LEDGER_SIGNER_KEY_SECRET_ARN', s.ledgerSignerKey.secretArn);
        s.ledgerSignerKey.grantRead(role);
        break;
      case 'ledger:read':
        fn.addEnvironment('LEDGER_RPC_URL', settings.ledgerRpcUrl);
        fn.addEnvironment('LEDGER_CHAIN_ID', settings.ledgerChainId);
        fn.addEnvironment('BATCH_TOKEN_ADDRESS', settings.batchTokenAddress);
        fn.addEnvironment('TRACE_LOG_ADDRESS', settings.traceLogAddress);
        break;
      case 'ledger-write-queue:send':
        fn.addEnvironment('LEDGER_WRITE_QUEUE_URL', s.queues['ledger-write-queue'].queueUrl);
        s.queues['ledger-write-queue'].grantSendMessages(role);
        break;
      case 'chain-webhook-secret':
        fn.addEnvironment('CHAIN_WEBHOOK_SECRET_ARN', s.chainWebhookSecret.secretArn);
        s.chainWebhookSecret.grantRead(role);
        break;
      case 'pin-store':
        fn.addEnvironment('PINNING_SERVICE_URL', settings.pinningServiceUrl);
        fn.addEnvironment('PINNING_SERVICE_TOKEN_SECRET_ARN', s.pinningServiceToken.secretArn);
        s.pinningServiceToken.grantRead(role);
        break;
      case 'maaif':
        fn.addEnvironment('MAAIF_API_URL', settings.maaifApiUrl);
        fn.addEnvironment('MAAIF_API_KEY_SECRET_ARN', s.maaifApiKey.secretArn);
        s.maaifApiKey.grantRead(role);
        break;
      case 'national-check-queue:send':
        fn.addEnvironment('NATIONAL_CHECK_QUEUE_URL', s.queues['national-check-queue'].queueUrl);
        s.queues['national-check-queue'].grantSendMessages(role);
        break;
      case 'gfw':
        fn.addEnvironment('GFW_API_URL', settings.gfwApiUrl);
        fn.addEnvironment('GFW_API_KEY_SECRET_ARN', s.gfwApiKey.secretArn);
        s.gfwApiKey.grantRead(role);
        break;
      case 'dds-filing-queue:send':
        fn.addEnvironment('DDS_FILING_QUEUE_URL', s.queues['dds-filing-queue'].queueUrl);
        s.queues['dds-filing-queue'].grantSendMessages(role);
        break;
      case 'eudr-registry':
        fn.addEnvironment('EUDR_DDS_ENDPOINT', settings.eudrDdsEndpoint);
        fn.addEnvironment('EUDR_USERNAME', settings.eudrUsername);
        fn.addEnvironment('EUDR_CLIENT_ID', settings.eudrClientId);
        fn.addEnvironment('EUDR_AUTH_KEY_SECRET_ARN', s.eudrAuthKey.secretArn);
        s.eudrAuthKey.grantRead(role);
        break;
      case 'payout-provider':
        fn.addEnvironment('PAYOUT_PROVIDER_URL', settings.payoutProviderUrl);
        fn.addEnvironment('PAYOUT_PROVIDER_CREDENTIALS_SECRET_ARN', s.payoutProviderCredentials.secretArn);
        s.payoutProviderCredentials.grantRead(role);
        break;
      case 'payout-webhook-secret':
        fn.addEnvironment('PAYOUT_WEBHOOK_SECRET_ARN', s.payoutWebhookSecret.secretArn);
        s.payoutWebhookSecret.grantRead(role);
        break;
      default: {
        const unknown: never = need;
        throw new Error(`bindNeeds: no wiring for need ${String(unknown)}`);
      }
    }
  }
}
