/**
 * Everything that holds data or state and must outlive a redeploy: the single table, the work
 * queues (shared/manifest.ts QUEUES) with their dead-letter queues, the manual-review topic and the secrets. Nothing here
 * knows about functions; `needs.ts` wires functions to these resources.
 */
import { createHash } from 'node:crypto';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Alias, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Subscription, SubscriptionFilter, SubscriptionProtocol, Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUEUES, type QueueName } from '../../shared/manifest';
import type { ManagerSubscription } from './settings';

export type { QueueName };

/** Name of the single table's one global secondary index. */
export const GSI1 = 'GSI1';
/** Sparse index of open payouts, batches awaiting their payout, unconfirmed ledger writes and registrations awaiting the national registry (reconciliation). */
export const GSI2 = 'GSI2';

/** Props of {@link StatefulResources}. */
export interface StatefulResourcesProps {
  /** Visibility timeout of each queue: at least 6 × its consumer's timeout (AWS guidance for Lambda event sources). */
  queueVisibility: Record<QueueName, Duration>;
  managerSubscriptions: ManagerSubscription[];
}

/** Table, queues, topic and secrets of the service. */
export class StatefulResources extends Construct {
  readonly table: Table;
  readonly queues: Record<QueueName, Queue>;
  readonly manualReviewTopic: Topic;
  /**
   * The ledger signer: an asymmetric KMS key (ECC_SECG_P256K1, SIGN_VERIFY) whose private key never
   * leaves KMS; only the ledger writer may use it (kms:Sign, kms:GetPublicKey; infra/stack/needs.ts).
   */
  readonly ledgerSignerKmsKey: Key;
  /**
   * The master key of outbound webhook signing secrets (envelope encryption, symmetric, rotated
   * yearly): creation and rotation may only generate data keys, the sender may decrypt them.
   */
  readonly outboundSecretsKey: Key;
  /** `{api_key, api_secret}` of the payout provider. */
  readonly payoutProviderCredentials: Secret;
  /** pawaPay: `{"api_token", "callback_public_keys": [PEM]}` (docs/operations.md#pawapay). */
  readonly pawapayCredentials: Secret;
  /** The provider's Standard Webhooks secret (`whsec_…`). */
  readonly payoutWebhookSecret: Secret;
  readonly chainWebhookSecret: Secret;
  readonly pinningServiceToken: Secret;
  readonly gfwApiKey: Secret;
  readonly eudrAuthKey: Secret;
  readonly maaifApiKey: Secret;
  /** `{api_key, api_secret}` of the fiat on-ramp (MFI deposits). */
  readonly onrampCredentials: Secret;
  /** The on-ramp's Standard Webhooks secret (`whsec_…`). */
  readonly onrampWebhookSecret: Secret;
  /** Bearer token of the coffee price feed; `none` when the source needs none. */
  readonly priceFeedToken: Secret;

  constructor(scope: Construct, id: string, props: StatefulResourcesProps) {
    super(scope, id);

    this.table = new Table(this, 'Table', {
      partitionKey: { name: 'PK', type: AttributeType.STRING },
      sortKey: { name: 'SK', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: 'expires_at_epoch',
      removalPolicy: RemovalPolicy.RETAIN,
      // The change stream outbound webhooks are made from (a transactional outbox: infra/stack/outbound-webhooks.ts).
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: GSI1,
      partitionKey: { name: 'GSI1PK', type: AttributeType.STRING },
      sortKey: { name: 'GSI1SK', type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: GSI2,
      partitionKey: { name: 'GSI2PK', type: AttributeType.STRING },
      sortKey: { name: 'GSI2SK', type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    // FIFO-ness and receives before the DLQ come from the manifest (shared/manifest.ts QUEUES).
    const work = (q: QueueName, id: string) => this.workQueue(id, props.queueVisibility[q], QUEUES[q].fifo, QUEUES[q].maxReceiveCount);
    this.queues = {
      'payout-request-queue': work('payout-request-queue', 'PayoutRequestQueue'),
      'ledger-write-queue': work('ledger-write-queue', 'LedgerWriteQueue'),
      'ledger-receipt-queue': work('ledger-receipt-queue', 'LedgerReceiptQueue'),
      'dds-filing-queue': work('dds-filing-queue', 'DdsFilingQueue'),
      'outbound-webhook-queue': work('outbound-webhook-queue', 'OutboundWebhookQueue'),
      'evidence-pin-queue': work('evidence-pin-queue', 'EvidencePinQueue'),
      'order-work-queue': work('order-work-queue', 'OrderWorkQueue'),
    };

    // SNS-side encryption with the AWS managed key (alias/aws/sns): its key policy lets SNS in this
    // account use it, so publishers need no KMS grant.
    this.manualReviewTopic = new Topic(this, 'ManualReviewTopic', {
      displayName: 'Coffee trace: payouts in manual review',
      masterKey: Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    for (const sub of props.managerSubscriptions) this.subscribeManager(sub);

    this.ledgerSignerKmsKey = new Key(this, 'LedgerSignerKmsKey', {
      description:
        "The ledger signer (secp256k1): signs ledger transactions in KMS; its address holds the contracts' roles and is the service treasury.",
      keySpec: KeySpec.ECC_SECG_P256K1,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // The key's address holds the roles and the treasury's funds: never deleted with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.outboundSecretsKey = new Key(this, 'OutboundSecretsKey', {
      description: 'Wraps the data keys of outbound webhook signing secrets (envelope encryption, encryption context endpoint_id).',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.pawapayCredentials = new Secret(this, 'PawapayCredentials', {
      description:
        'pawaPay API token and callback signing keys as JSON {"api_token", "callback_public_keys": [PEM]}. Created with placeholders: put the real ones here when pawapay is in PAYOUT_PROVIDERS.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ callback_public_keys: [] }),
        generateStringKey: 'api_token',
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.payoutProviderCredentials = new Secret(this, 'PayoutProviderCredentials', {
      description: 'Payout provider API credentials as JSON {"api_key", "api_secret"}. Created with placeholders: put the real ones here.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ api_key: 'REPLACE_ME' }),
        generateStringKey: 'api_secret',
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.payoutWebhookSecret = new Secret(this, 'PayoutWebhookSecret', {
      description:
        "Standard Webhooks secret (whsec_...) the payout provider signs webhooks with. Created with a random placeholder: put the provider's here.",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.chainWebhookSecret = new Secret(this, 'ChainWebhookSecret', {
      description:
        "Standard Webhooks secret (whsec_...) the chain-event provider signs webhooks with. Created with a random placeholder: put the provider's here.",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.pinningServiceToken = new Secret(this, 'PinningServiceToken', {
      description:
        'Credentials of the IPFS pinning service evidence CARs go to (EVIDENCE_PINNING_CREDENTIALS): JSON {"access_key_id", "secret_access_key"} for an S3-compatible pinning API, {"authorization"} (or {}) for Kubo. Created with placeholders: put the real ones here.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ access_key_id: 'REPLACE_ME' }),
        generateStringKey: 'secret_access_key',
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.gfwApiKey = new Secret(this, 'GfwApiKey', {
      description: 'Global Forest Watch Data API key (x-api-key). Created with a random placeholder: put the real one here.',
      generateSecretString: { passwordLength: 40, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.eudrAuthKey = new Secret(this, 'EudrAuthKey', {
      description:
        'EU Information System web-service authentication key delegated by the importer (WS-Security UsernameToken password). Created with a random placeholder: put the real one here.',
      generateSecretString: { passwordLength: 40, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.maaifApiKey = new Secret(this, 'MaaifApiKey', {
      description: 'API key of the national farmer registry (MAAIF). Created with a random placeholder: put the real one here.',
      generateSecretString: { passwordLength: 40, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.priceFeedToken = new Secret(this, 'PriceFeedToken', {
      description:
        "Bearer token of the coffee price feed (PRICE_FEED_URL). Created with a random placeholder: put the source's token here, or none when it needs no token.",
      generateSecretString: { passwordLength: 40, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.onrampCredentials = new Secret(this, 'OnrampCredentials', {
      description: 'Fiat on-ramp API credentials as JSON {"api_key", "api_secret"}. Created with placeholders: put the real ones here.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ api_key: 'REPLACE_ME' }),
        generateStringKey: 'api_secret',
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.onrampWebhookSecret = new Secret(this, 'OnrampWebhookSecret', {
      description:
        "Standard Webhooks secret (whsec_...) the fiat on-ramp signs webhooks with. Created with a random placeholder: put the on-ramp's here.",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const s of [
      this.onrampCredentials,
      this.onrampWebhookSecret,
      this.payoutProviderCredentials,
      this.pawapayCredentials,
      this.payoutWebhookSecret,
      this.chainWebhookSecret,
      this.pinningServiceToken,
      this.gfwApiKey,
      this.eudrAuthKey,
      this.maaifApiKey,
      this.priceFeedToken,
    ]) {
      Validations.of(s).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Third-party credentials (payout provider API key and webhook secret, on-ramp, pinning, registry keys) are issued outside AWS; Secrets Manager cannot rotate them. They are rotated with the issuer and written here by the operator.',
      });
    }
  }

  /** An encrypted, TLS-only queue with its own DLQ (a message goes there after `maxReceiveCount` receives). */
  private workQueue(id: string, visibilityTimeout: Duration, fifo: boolean, maxReceiveCount: number): Queue {
    const dlq = new Queue(this, `${id}Dlq`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      ...(fifo ? { fifo: true } : {}),
    });
    return new Queue(this, id, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout,
      deadLetterQueue: { queue: dlq, maxReceiveCount },
      ...(fifo ? { fifo: true, contentBasedDeduplication: false } : {}),
    });
  }

  /**
   * Subscribes a manager's email (and SMS, when given) to the manual-review topic, filtered on
   * the message attribute `cooperative_id`, so each manager sees only their cooperative's payouts.
   */
  private subscribeManager(sub: ManagerSubscription): void {
    const filterPolicy = { cooperative_id: SubscriptionFilter.stringFilter({ allowlist: [sub.cooperativeId] }) };
    // Stable construct ids from (cooperative, email): reordering the context list does not replace
    // (and make the manager re-confirm) a subscription, and one manager may serve two cooperatives.
    const key = createHash('sha256').update(`${sub.cooperativeId}\n${sub.email}`).digest('hex').slice(0, 12);
    new Subscription(this, `Manager${key}Email`, {
      topic: this.manualReviewTopic,
      protocol: SubscriptionProtocol.EMAIL,
      endpoint: sub.email,
      filterPolicy,
    });
    if (sub.sms) {
      new Subscription(this, `Manager${key}Sms`, {
        topic: this.manualReviewTopic,
        protocol: SubscriptionProtocol.SMS,
        endpoint: sub.sms,
        filterPolicy,
      });
    }
  }
}
