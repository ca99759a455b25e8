import { SqsWorkQueue } from '../adapters/aws/queues';
import { DdsRepository } from '../adapters/dynamodb/dds-repo';
import type { DdsRegistry } from '../adapters/eudr/dds-registry';
import { createSoapDdsRegistryFromEnv } from '../adapters/eudr/soap-dds-registry';
import { BundledAlertAreasForestCheck } from '../adapters/forest-check/bundled-alert-areas';
import { createGfwForestCheckFromEnv } from '../adapters/forest-check/gfw-forest-check';
import { envOr } from '../config';
import type { ForestCheck } from '../domain/ports';
import type { DdsDeps, DdsFilingMessage } from '../use-cases/eudr';
import { custodyRepo, pinStore } from './custody';
import { batchRepo, now, registryRepo } from './repos';

/**
 * EUDR adapters. The forest check asks Global Forest Watch when its key is configured
 * (GFW_API_KEY or GFW_API_KEY_SECRET_ARN), otherwise it reads the bundled alert areas (the local
 * stack). DDS filing talks SOAP to the EU Information System at EUDR_DDS_ENDPOINT (locally its
 * sandbox).
 */
let forest: ForestCheck | undefined;
let dds: DdsRepository | undefined;
let registryP: Promise<DdsRegistry> | undefined;

export function forestCheck(): ForestCheck {
  forest ??= process.env.GFW_API_KEY || process.env.GFW_API_KEY_SECRET_ARN ? createGfwForestCheckFromEnv({ timeoutMs: 4000 }) : new BundledAlertAreasForestCheck(now);
  return forest;
}

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
