import { SqsWorkQueue } from '../adapters/aws/queues';
import { DdsRepository } from '../adapters/dynamodb/dds-repo';
import type { DdsRegistry } from '../adapters/eudr/dds-registry';
import { createSoapDdsRegistryFromEnv } from '../adapters/eudr/soap-dds-registry';
import { envOr } from '../config';
import type { DdsDeps, DdsFilingMessage } from '../use-cases/eudr';
import { pinStore } from './custody';
import { custodyRepo } from './ledger-writes';
import { batchRepo, now, registryRepo } from './repos';

/**
 * EUDR adapters: due diligence statements, filed over SOAP with the EU Information System at
 * EUDR_DDS_ENDPOINT (locally its sandbox). The forest check is in ./registry.
 */
export { forestCheck } from './registry';
let dds: DdsRepository | undefined;
let registryP: Promise<DdsRegistry> | undefined;

export const ddsRepo = () => (dds ??= new DdsRepository());
export const ddsFilingQueue = () => new SqsWorkQueue<DdsFilingMessage>('DDS_FILING_QUEUE_URL');

export function ddsRegistry(): Promise<DdsRegistry> {
  registryP ??= createSoapDdsRegistryFromEnv();
  registryP.catch(() => (registryP = undefined));
  return registryP;
}

export function ddsDeps(): DdsDeps {
  return {
    batches: batchRepo(), registry: registryRepo(), custody: custodyRepo(), dds: ddsRepo(), pins: pinStore(), filingQueue: ddsFilingQueue(),
    ipfsGatewayUrl: envOr('IPFS_GATEWAY_URL', 'https://ipfs.io'), now,
  };
}
