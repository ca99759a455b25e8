/**
 * Deployment settings. Each scalar setting is a CloudFormation parameter whose default comes from
 * CDK context (`cdk.json`, or `-c key=value`), so it can be changed at synth time or at deploy
 * time (`cdk deploy --parameters LedgerRpcUrl=...`). Manager subscriptions are context only: they
 * create resources.
 */
import { CfnParameter } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEFAULT_PAYOUT_BALANCE_ALARM_USD } from '../../shared/domain/payout-balance';
import { readStage, type StageConfig } from './stage';

/** A cooperative manager who receives that cooperative's manual-review notifications. */
export interface ManagerSubscription {
  cooperativeId: string;
  email: string;
  /** Optional E.164 phone number for an SMS copy, e.g. `+256700123456`. */
  sms?: string;
}

/**
 * Context keys and their defaults (mirrored in cdk.json; a test keeps the two equal).
 * - docsBaseUrl: base of `error.docs` links; empty = `<publicBaseUrl>/docs`.
 * - publicBaseUrl: PUBLIC_BASE_URL, the base of every absolute link (trace page, its QR code, docs,
 *   OpenAPI server), https, no trailing slash; empty = the API's own
 *   `https://<api>.execute-api.<region>.amazonaws.com/prod`. Set it to the custom domain
 *   (e.g. `https://trace.example.com`) once there is one. Links never come from request headers.
 * - jwtIssuer / jwtAudience / jwksUrl: the token issuer the authorizer trusts (docs/security.md#tokens-and-roles).
 * - ledgerRpcUrl / ledgerChainId: the EVM network of the BatchToken and trace log (default: Base Sepolia testnet).
 * - batchTokenAddress / traceLogAddress: the deployed contracts; the zero address until they are deployed.
 * - lendingVaultAddress / vaultAssetAddress: the LendingVault and its asset (the network's USDC), as
 *   `npm run deploy-contracts` prints them; the zero address until deployed.
 * - payoutProviderUrl: base URL of the payout provider's API.
 * - payoutProviders: PAYOUT_PROVIDERS, the payout providers in order, primary first (`provider-api`, `pawapay`; docs/api/payouts.md#payout-providers-and-failover).
 * - pawapayApiUrl / pawapayUsdUgxRate: pawaPay's API (production `https://api.pawapay.io`) and the UGX per USD its payouts convert at.
 * - evidencePinningApi: the IPFS pinning service evidence CARs go to (docs/api/evidence.md#evidence-on-ipfs): `s3` (an S3-compatible
 *   pinning API, e.g. Filebase) or `kubo` (a Kubo / IPFS Cluster RPC API, dag/import).
 * - evidencePinningEndpoint: its endpoint (`https://s3.filebase.com`; for kubo the RPC API base URL).
 * - evidencePinningBucket / evidencePinningRegion: the pinning API's bucket and signing region (s3 only).
 * - priceFeedUrl: the published coffee price feed (USD per kg by grade) that values loan collateral.
 * - onrampUrl: base URL of the fiat on-ramp's API (MFI deposits).
 * - treasuryAddress: the ledger signer's address (the service treasury), where the on-ramp delivers USDC.
 * - chainWatchConfirmations: blocks a log must be buried under before the scheduled chain watcher reads it.
 * - chainWatchStartBlock: where the chain watcher's cursor starts when the table has none (the contracts' deployment block).
 * - manualPayoutDailyLimitUsdc: the cap on one cooperative's manual payouts (POST /payments/farmer-payout) per UTC day, USDC.
 * - loanTermDays: days from a loan's creation to its due date (LOAN_TERM_DAYS); 90 days past due it is written off.
 * - managerSubscriptions: `[{cooperativeId, email, sms?}]`, see {@link ManagerSubscription}.
 * - payoutBalanceAlarmUsd: the merchant balance (USD) of a payout provider below which the alarm
 *   PayoutMerchantBalanceLow fires and the balance monitor notifies the ops (PAYOUT_BALANCE_ALARM_USD);
 *   a context value, not a parameter, because an alarm's threshold is fixed in the template.
 */
export const SETTING_DEFAULTS = {
  docsBaseUrl: '',
  publicBaseUrl: '',
  jwtIssuer: 'https://auth.example.com/',
  jwtAudience: 'coffee-trace-api',
  jwksUrl: 'https://auth.example.com/.well-known/jwks.json',
  ledgerRpcUrl: 'https://sepolia.base.org',
  ledgerChainId: '84532',
  batchTokenAddress: '0x0000000000000000000000000000000000000000',
  traceLogAddress: '0x0000000000000000000000000000000000000000',
  auditAnchorAddress: '0x0000000000000000000000000000000000000000',
  lendingVaultAddress: '0x0000000000000000000000000000000000000000',
  vaultAssetAddress: '0x0000000000000000000000000000000000000000',
  payoutProviderUrl: 'https://api.payout-provider.example.com',
  payoutProviders: 'provider-api',
  pawapayApiUrl: 'https://api.pawapay.io',
  pawapayUsdUgxRate: '3700',
  evidencePinningApi: 's3',
  evidencePinningEndpoint: 'https://s3.filebase.com',
  evidencePinningBucket: 'coffee-trace-evidence',
  evidencePinningRegion: 'us-east-1',
  gfwApiUrl: 'https://data-api.globalforestwatch.org',
  maaifApiUrl: 'https://farmer-registry.agriculture.go.ug',
  eudrDdsEndpoint: 'https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt/ws/EUDRDueDiligenceStatementServiceV3',
  eudrUsername: 'importer-username',
  eudrClientId: 'eudr-test',
  priceFeedUrl: 'https://prices.example.com/coffee/usd-per-kg.json',
  onrampUrl: 'https://api.onramp.example.com',
  treasuryAddress: '0x0000000000000000000000000000000000000000',
  chainWatchConfirmations: '5',
  chainWatchStartBlock: '0',
  manualPayoutDailyLimitUsdc: '10000',
  loanTermDays: '180',
  managerSubscriptions: [] as ManagerSubscription[],
};

/** Resolved settings: CloudFormation tokens for the parameters, plain values for the rest. */
export interface Settings {
  /** Raw parameter value; empty means "the API's own URL" (see the stack). */
  docsBaseUrlParam: string;
  /** Raw parameter value of PublicBaseUrl; empty means "the API's own stage URL" (see the stack). */
  publicBaseUrlParam: string;
  jwtIssuer: string;
  jwtAudience: string;
  jwksUrl: string;
  ledgerRpcUrl: string;
  ledgerChainId: string;
  batchTokenAddress: string;
  traceLogAddress: string;
  auditAnchorAddress: string;
  lendingVaultAddress: string;
  vaultAssetAddress: string;
  payoutProviderUrl: string;
  payoutProviders: string;
  pawapayApiUrl: string;
  pawapayUsdUgxRate: string;
  evidencePinningApi: string;
  evidencePinningEndpoint: string;
  evidencePinningBucket: string;
  evidencePinningRegion: string;
  gfwApiUrl: string;
  maaifApiUrl: string;
  eudrDdsEndpoint: string;
  eudrUsername: string;
  eudrClientId: string;
  /** The published coffee price feed document (docs/api/lending.md#price-feed). */
  priceFeedUrl: string;
  onrampUrl: string;
  treasuryAddress: string;
  chainWatchConfirmations: string;
  chainWatchStartBlock: string;
  /** USDC per cooperative and UTC day (MANUAL_PAYOUT_DAILY_LIMIT_USDC). */
  manualPayoutDailyLimitUsdc: string;
  loanTermDays: string;
  managerSubscriptions: ManagerSubscription[];
  /** USD (PAYOUT_BALANCE_ALARM_USD): context `payoutBalanceAlarmUsd`, default DEFAULT_PAYOUT_BALANCE_ALARM_USD. */
  payoutBalanceAlarmUsd: number;
  /** The deploy stage from context `stage` (`-c stage=dev|prod`, default dev): see infra/stack/stage.ts. */
  stage: StageConfig;
  /** Create CloudWatch alarms (prod yes, dev no): `stage.alarmsEnabled`. */
  alarmsEnabled: boolean;
}

type ScalarKey = Exclude<keyof typeof SETTING_DEFAULTS, 'managerSubscriptions'>;

const HTTPS_URL = '^https://\\S+$';
/** An https base URL: a host (and port), an optional path, no user info, query, fragment or trailing slash (shared/config.ts checkPublicBaseUrl checks it again at run time). */
const PUBLIC_BASE_URL = "^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%!$&'()*+,;=:@-]+)*$";
const ADDRESS = '^0x[0-9a-fA-F]{40}$';

/** Declares the stack's parameters (defaults from context) and reads manager subscriptions. */
export function loadSettings(scope: Construct): Settings {
  const param = (key: ScalarKey, id: string, description: string, allowedPattern?: string): string => {
    const raw = scope.node.tryGetContext(key) as unknown;
    const fallback = raw === undefined || raw === null ? SETTING_DEFAULTS[key] : String(raw);
    return new CfnParameter(scope, id, {
      type: 'String',
      default: fallback,
      description,
      ...(allowedPattern ? { allowedPattern } : {}),
    }).valueAsString;
  };
  return {
    docsBaseUrlParam: param(
      'docsBaseUrl',
      'DocsBaseUrl',
      "Base URL of the API reference used in error.docs links (no trailing slash); empty = the API's own execute-api URL + /docs.",
      `^$|${HTTPS_URL}`,
    ),
    publicBaseUrlParam: param(
      'publicBaseUrl',
      'PublicBaseUrl',
      "Base URL of every absolute link the service prints (trace page, QR code, docs, OpenAPI server), https, no trailing slash, no query; empty = the API's own execute-api stage URL.",
      `^$|${PUBLIC_BASE_URL}`,
    ),
    jwtIssuer: param('jwtIssuer', 'JwtIssuer', 'Expected `iss` of bearer tokens.'),
    jwtAudience: param('jwtAudience', 'JwtAudience', 'Expected `aud` of bearer tokens.'),
    jwksUrl: param('jwksUrl', 'JwksUrl', 'JWKS URL of the token issuer.', HTTPS_URL),
    ledgerRpcUrl: param('ledgerRpcUrl', 'LedgerRpcUrl', 'JSON-RPC URL of the EVM ledger.', HTTPS_URL),
    ledgerChainId: param('ledgerChainId', 'LedgerChainId', 'Chain id of the EVM ledger.', '^[0-9]+$'),
    batchTokenAddress: param('batchTokenAddress', 'BatchTokenAddress', 'Address of the BatchToken contract.', ADDRESS),
    traceLogAddress: param('traceLogAddress', 'TraceLogAddress', 'Address of the TraceLog contract.', ADDRESS),
    auditAnchorAddress: param(
      'auditAnchorAddress',
      'AuditAnchorAddress',
      'Address of the AuditAnchor contract (periodic anchors of audit logs).',
      ADDRESS,
    ),
    lendingVaultAddress: param('lendingVaultAddress', 'LendingVaultAddress', 'Address of the LendingVault contract (ERC-4626).', ADDRESS),
    vaultAssetAddress: param(
      'vaultAssetAddress',
      'VaultAssetAddress',
      "Address of the lending vault's asset (the network's USDC contract).",
      ADDRESS,
    ),
    payoutProviderUrl: param('payoutProviderUrl', 'PayoutProviderUrl', 'Base URL of the payout provider API.', HTTPS_URL),
    payoutProviders: param(
      'payoutProviders',
      'PayoutProviders',
      'The payout providers in order, primary first, comma-separated: provider-api, pawapay.',
      '^(provider-api|pawapay)(,(provider-api|pawapay))?$',
    ),
    pawapayApiUrl: param(
      'pawapayApiUrl',
      'PawapayApiUrl',
      "pawaPay's Merchant API (https://api.pawapay.io; sandbox https://api.sandbox.pawapay.io).",
      HTTPS_URL,
    ),
    pawapayUsdUgxRate: param(
      'pawapayUsdUgxRate',
      'PawapayUsdUgxRate',
      'UGX per 1 USD that pawaPay payouts convert at (the UGX wallet funding rate).',
      '^[0-9]+(\\.[0-9]+)?$',
    ),
    evidencePinningApi: param(
      'evidencePinningApi',
      'EvidencePinningApi',
      'The IPFS pinning service evidence CARs are uploaded to: s3 (an S3-compatible pinning API) or kubo (a Kubo / IPFS Cluster RPC API).',
      '^(s3|kubo)$',
    ),
    evidencePinningEndpoint: param(
      'evidencePinningEndpoint',
      'EvidencePinningEndpoint',
      'Endpoint of the pinning service (s3: the S3 endpoint, e.g. https://s3.filebase.com; kubo: the RPC API base URL).',
      HTTPS_URL,
    ),
    evidencePinningBucket: param(
      'evidencePinningBucket',
      'EvidencePinningBucket',
      'Bucket of the S3-compatible pinning API the CARs are put into (s3 only).',
      '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
    ),
    evidencePinningRegion: param(
      'evidencePinningRegion',
      'EvidencePinningRegion',
      'Signing region of the S3-compatible pinning API (Filebase: us-east-1).',
      '^[a-z0-9-]{2,32}$',
    ),
    gfwApiUrl: param('gfwApiUrl', 'GfwApiUrl', 'Global Forest Watch Data API base URL.', HTTPS_URL),
    maaifApiUrl: param('maaifApiUrl', 'MaaifApiUrl', 'Base URL of the national farmer registry (MAAIF) API.', HTTPS_URL),
    eudrDdsEndpoint: param(
      'eudrDdsEndpoint',
      'EudrDdsEndpoint',
      'EU Information System DDS service endpoint (acceptance or production).',
      HTTPS_URL,
    ),
    eudrUsername: param('eudrUsername', 'EudrUsername', 'EU Information System web-service username delegated by the importer.'),
    eudrClientId: param(
      'eudrClientId',
      'EudrClientId',
      'EU Information System WebServiceClientId (eudr-test in acceptance, eudr-repository in production).',
    ),
    priceFeedUrl: param(
      'priceFeedUrl',
      'PriceFeedUrl',
      'URL of the published coffee price feed: JSON {updated_at, usd_per_kg: {screen18, screen15, FAQ, PB}} (docs/api/lending.md#price-feed).',
      HTTPS_URL,
    ),
    onrampUrl: param('onrampUrl', 'OnrampUrl', 'Base URL of the fiat on-ramp API (MFI deposits).', HTTPS_URL),
    treasuryAddress: param(
      'treasuryAddress',
      'TreasuryAddress',
      'Address of the ledger signer (the service treasury): the on-ramp delivers deposited USDC there.',
      ADDRESS,
    ),
    chainWatchConfirmations: param(
      'chainWatchConfirmations',
      'ChainWatchConfirmations',
      'Blocks a TraceLog or LendingVault log must be buried under before the scheduled chain watcher applies it.',
      '^[0-9]{1,4}$',
    ),
    chainWatchStartBlock: param(
      'chainWatchStartBlock',
      'ChainWatchStartBlock',
      "Block the chain watcher starts reading at when it has no cursor yet: the contracts' deployment block.",
      '^[0-9]{1,15}$',
    ),
    manualPayoutDailyLimitUsdc: param(
      'manualPayoutDailyLimitUsdc',
      'ManualPayoutDailyLimitUsdc',
      "Cap on one cooperative's manual payouts (POST /payments/farmer-payout) per UTC day, in USDC (at most 6 decimals).",
      '^[0-9]{1,12}(\\.[0-9]{1,6})?$',
    ),
    loanTermDays: param(
      'loanTermDays',
      'LoanTermDays',
      "Days from a loan's creation to its due date (LOAN_TERM_DAYS, 1-3650); a loan unpaid 90 days after it is written off.",
      '^[1-9][0-9]{0,3}$',
    ),
    managerSubscriptions: readManagerSubscriptions(scope),
    payoutBalanceAlarmUsd: readPayoutBalanceAlarmUsd(scope),
    stage: readStage(scope),
    alarmsEnabled: readStage(scope).alarmsEnabled,
  };
}

/**
 * Context `managerSubscriptions` (an array, or its JSON text when given with `-c`).
 * @throws Error naming the bad entry when an entry lacks cooperativeId or a plausible email/E.164 phone.
 */
/**
 * Context `payoutBalanceAlarmUsd` (`-c payoutBalanceAlarmUsd=2500`): USD, a number ≥ 0 with at most
 * 6 decimals; default DEFAULT_PAYOUT_BALANCE_ALARM_USD. @throws Error on anything else
 */
function readPayoutBalanceAlarmUsd(scope: Construct): number {
  const raw = scope.node.tryGetContext('payoutBalanceAlarmUsd') as unknown;
  if (raw === undefined || raw === null || raw === '') return DEFAULT_PAYOUT_BALANCE_ALARM_USD;
  const text = String(raw).trim();
  if (!/^\d{1,12}(\.\d{1,6})?$/.test(text))
    throw new Error(`context payoutBalanceAlarmUsd must be a USD amount ≥ 0 (at most 6 decimals), got ${text}`);
  return Number(text);
}

function readManagerSubscriptions(scope: Construct): ManagerSubscription[] {
  let raw = scope.node.tryGetContext('managerSubscriptions') as unknown;
  if (raw === undefined || raw === null || raw === '') return [];
  if (typeof raw === 'string') raw = JSON.parse(raw) as unknown;
  if (!Array.isArray(raw)) throw new Error('context managerSubscriptions must be an array of {cooperativeId, email, sms?}');
  return raw.map((entry: unknown, i) => {
    const e = entry as Partial<Record<keyof ManagerSubscription, unknown>>;
    const where = `context managerSubscriptions[${i}]`;
    if (typeof e.cooperativeId !== 'string' || e.cooperativeId.trim() === '') throw new Error(`${where}: cooperativeId is required`);
    if (typeof e.email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e.email))
      throw new Error(`${where}: email is not an email address`);
    if (e.sms !== undefined && (typeof e.sms !== 'string' || !/^\+[1-9][0-9]{6,14}$/.test(e.sms))) {
      throw new Error(`${where}: sms must be an E.164 number like +256700123456`);
    }
    return { cooperativeId: e.cooperativeId, email: e.email, ...(typeof e.sms === 'string' ? { sms: e.sms } : {}) };
  });
}
