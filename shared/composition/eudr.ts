import { createSoapDdsRegistryFromEnv } from '../adapters/eudr/soap-dds-registry';
import { submitDdsRequestXml } from '../adapters/eudr/submit-dds-xml';
import type { DdsDocuments, DdsRegistry } from '../domain/ports/eudr';
import type { DdsDeps } from '../use-cases/eudr';
import { ddsFilingQueue } from './queues';
import { batchRepo, custodyRepo, ddsRepo, now, registryRepo } from './repos';

/**
 * EUDR adapters: due diligence statements, filed over SOAP with the EU Information System at
 * EUDR_DDS_ENDPOINT (locally its sandbox). The forest check is in ./registry.
 */
export { forestCheck } from './registry';
let registryP: Promise<DdsRegistry> | undefined;

/** The EU Information System's SubmitDdsRequest XML (V3). */
const ddsDocuments: DdsDocuments = { submitRequestXml: submitDdsRequestXml };

export function ddsRegistry(): Promise<DdsRegistry> {
  registryP ??= createSoapDdsRegistryFromEnv();
  registryP.catch(() => (registryP = undefined));
  return registryP;
}

export function ddsDeps(): DdsDeps {
  return {
    batches: batchRepo(),
    registry: registryRepo(),
    custody: custodyRepo(),
    dds: ddsRepo(),
    documents: ddsDocuments,
    filingQueue: ddsFilingQueue(),
    now,
  };
}

export { ddsRepo };
