/**
 * AWS list prices (USD, us-east-1, on-demand, no free tier, first pricing tier) for the cost
 * benchmark (./cost.ts). Taken from the public pricing pages as last known to the author, not
 * fetched (no web access when this was written): check them against the pages below before
 * quoting a figure.
 */
export const AWS_PRICES = {
  /** When these were taken, and from where. */
  as_of: '2025-01 (DynamoDB on-demand after the 2024-11-01 price cut)',
  region: 'us-east-1',
  source: 'aws.amazon.com/{lambda,step-functions,dynamodb,api-gateway,sqs,sns}/pricing, as published; quoted from memory, not fetched',
  lambda: {
    /** Arm64 (Graviton), first 7.5 billion GB-s per month. */
    usdPerGbSecondArm64: 0.0000133334,
    usdPerRequest: 0.2 / 1e6,
  },
  stepFunctions: {
    /** Standard workflows. */
    usdPerStateTransition: 0.025 / 1000,
  },
  dynamodb: {
    /** On-demand capacity mode (standard table class). */
    usdPerWriteRequestUnit: 0.625 / 1e6,
    usdPerReadRequestUnit: 0.125 / 1e6,
  },
  apiGateway: {
    /** REST APIs, first 333 million requests per month. */
    usdPerRestRequest: 3.5 / 1e6,
  },
  sqs: {
    /** Per request (each 64 KB chunk of a payload is one request). */
    usdPerStandardRequest: 0.4 / 1e6,
    usdPerFifoRequest: 0.5 / 1e6,
  },
  sns: {
    /** Standard topics, per publish (each 64 KB chunk); deliveries (email, SMS) are extra. */
    usdPerPublish: 0.5 / 1e6,
  },
} as const;

/**
 * The ledger's gas for the cost benchmark: the chain the deploy guide names (Base). Assumed, not
 * fetched (a typical L2 execution gas price and ETH price of 2025; check a block explorer before
 * quoting a figure); `BENCH_GAS_PRICE_GWEI` and `BENCH_ETH_USD` override them. Only the L2
 * execution gas is priced: the L1 data fee each Base transaction also pays for its calldata is left
 * out (small since blobs, and not measurable on the local chain).
 */
export const CHAIN_PRICES = {
  chain: 'Base',
  as_of: '2025 (assumed typical values, not fetched)',
  gasPriceGwei: Number(process.env.BENCH_GAS_PRICE_GWEI ?? 0.01),
  ethUsd: Number(process.env.BENCH_ETH_USD ?? 3000),
} as const;
