import { SqsWorkQueue } from '../adapters/aws/queues';
import { S3DdsDocumentStore } from '../adapters/aws/s3-dds-documents';
import { createSoapDdsRegistryFromEnv } from '../adapters/eudr/soap-dds-registry';
import { submitDdsRequestXml } from '../adapters/eudr/submit-dds-xml';
import { envOr, requireEnv } from '../config';
import type { DdsDocumentStore, DdsDocuments, DdsFilingMessage, DdsRegistry } from '../domain/ports/eudr';
import type { WorkQueue } from '../domain/ports/messaging';
import type { DdsDeps, DdsReadDeps } from '../use-cases/eudr';
import type { DdsAmendDeps } from '../use-cases/eudr-amend';
import type { EvidencePackDeps } from '../use-cases/evidence-pack';
import { auditDeps } from './audit';
import { once, onFirstUse } from './once';
import { batchRepo, custodyRepo, ddsRepo, now, registryRepo } from './platform';

/**
 * EUDR (docs/api/eudr.md): due diligence statements, generated from a batch and filed over SOAP
 * with the EU Information System at EUDR_DDS_ENDPOINT (locally its sandbox) by the DDS filer, and
 * the EU evidence pack. The forest check is in ./registry, the statements' store in ./platform.
 */

/** The EU Information System's SubmitDdsRequest XML (V3). */
const ddsDocuments: DdsDocuments = { submitRequestXml: submitDdsRequestXml };

/** Due diligence statements to file with the EU Information System (DDS_FILING_QUEUE_URL). */
const ddsFilingQueue = (): WorkQueue<DdsFilingMessage> =>
  once(ddsFilingQueue, () => new SqsWorkQueue<DdsFilingMessage>('DDS_FILING_QUEUE_URL'));

/** The EU Information System's DDS service (EUDR_DDS_ENDPOINT, its credentials). Errors: rejects naming a missing setting. */
export const ddsRegistry = (): Promise<DdsRegistry> => once(ddsRegistry, createSoapDdsRegistryFromEnv);

/**
 * The statements' documents (docs/api/eudr.md#where-statements-are-kept): the evidence bucket
 * EVIDENCE_BUCKET under `dds/` (private: GET /ipfs and the pinner read only `car/` and `files/`),
 * reached through AWS_ENDPOINT_URL_S3 when set (locally fauxqs's S3), else the regional endpoint.
 * Configured on first use.
 */
export const ddsDocumentStore = (): DdsDocumentStore =>
  once(ddsDocumentStore, () =>
    onFirstUse<DdsDocumentStore>(() => {
      const endpoint = envOr('AWS_ENDPOINT_URL_S3', '');
      return new S3DdsDocumentStore({
        bucket: requireEnv('EVIDENCE_BUCKET'),
        region: envOr('AWS_REGION', 'us-east-1'),
        ...(endpoint ? { endpoint } : {}),
      });
    }),
  );

/**
 * The largest XML GET /eudr/dds/{id}/xml answers inline, bytes (DDS_XML_INLINE_MAX_BYTES, default
 * 4 MiB): a Lambda answer is at most 6 MB, and the XML travels JSON-escaped inside it; larger
 * documents are answered 303 with a presigned URL (docs/api/eudr.md#large-statements). A value
 * that is not a whole number of at least 0 is ignored.
 */
export function ddsXmlInlineMaxBytes(): number {
  const n = Number(envOr('DDS_XML_INLINE_MAX_BYTES', String(DEFAULT_DDS_XML_INLINE_MAX_BYTES)));
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_DDS_XML_INLINE_MAX_BYTES;
}
const DEFAULT_DDS_XML_INLINE_MAX_BYTES = 4 * 1024 * 1024;

/** Ports of reading a statement with its documents (GET /eudr/dds/{id}, /xml). */
export function ddsReadDeps(): DdsReadDeps {
  return { dds: ddsRepo(), documentStore: ddsDocumentStore() };
}

/** Ports of DDS generation (POST /eudr/generate-dds). */
export function ddsDeps(): DdsDeps {
  return {
    batches: batchRepo(),
    registry: registryRepo(),
    custody: custodyRepo(),
    dds: ddsRepo(),
    documents: ddsDocuments,
    documentStore: ddsDocumentStore(),
    filingQueue: ddsFilingQueue(),
    now,
  };
}

/** Ports of amending and withdrawing statements (POST /eudr/dds/{id}/amend, /withdraw). Errors: rejects naming a missing EUDR setting. */
export async function ddsAmendDeps(): Promise<DdsAmendDeps> {
  return { ...ddsDeps(), dds: ddsRepo(), ddsRegistry: await ddsRegistry() };
}

/**
 * Ports of the EU evidence pack: the table, and the ledger (read only), the evidence copy and the
 * anchors as the audit reads them (./audit: built on first use, so a refused or unknown DDS is
 * answered without the ledger's configuration).
 */
export function evidencePackDeps(): EvidencePackDeps {
  return { ...auditDeps(), dds: ddsRepo(), documentStore: ddsDocumentStore(), registry: registryRepo() };
}
