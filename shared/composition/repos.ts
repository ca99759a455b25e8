import { BatchRepository } from '../adapters/dynamodb/batch-repo';
import { PayoutRepository } from '../adapters/dynamodb/payout-repo';
import { RegistryRepository } from '../adapters/dynamodb/registry-repo';

/**
 * The DynamoDB repositories, one per container. Split from ./index so that a handler that needs
 * only the table bundles only the DynamoDB client.
 */
let registry: RegistryRepository | undefined;
let batches: BatchRepository | undefined;
let payouts: PayoutRepository | undefined;

export const registryRepo = () => (registry ??= new RegistryRepository());
export const batchRepo = () => (batches ??= new BatchRepository());
export const payoutRepo = () => (payouts ??= new PayoutRepository());

/** Wall clock. */
export const now = () => new Date();
