import { SqsWorkQueue } from '../adapters/aws/queues';
import { S3EvidenceArchive } from '../adapters/aws/s3-evidence-archive';
import { S3UploadReader } from '../adapters/aws/s3-object-reader';
import type { S3BucketLocation } from '../adapters/aws/s3-signed-fetch';
import { S3UploadPresigner } from '../adapters/aws/s3-upload-presigner';
import { EvidencePinRepository } from '../adapters/dynamodb/evidence-pin-repo';
import { EvidenceUploadRepository } from '../adapters/dynamodb/evidence-upload-repo';
import { OrderWorkRepository } from '../adapters/dynamodb/order-work-index';
import { KuboCarPinner } from '../adapters/ipfs/kubo-car-pinner';
import { S3CarPinner } from '../adapters/ipfs/s3-car-pinner';
import { envOr, requireEnv, secret } from '../config';
import type {
  CarPinner,
  EvidenceArchive,
  EvidencePinMessage,
  EvidencePinStatusStore,
  EvidenceUploadObjects,
  EvidenceUploadReader,
  EvidenceUploadStore,
} from '../domain/ports/evidence';
import type { OrderWorkIndex, OrderWorkMessage } from '../domain/ports/batches';
import type { WorkQueue } from '../domain/ports/messaging';
import type { BatchDeps } from '../use-cases/batches';
import type { CustodyDeps } from '../use-cases/custody';
import type { EvidenceUploadDeps, UploadedPhotoDeps } from '../use-cases/evidence-uploads';
import type { EvidenceKeeping, EvidencePinnerDeps } from '../use-cases/evidence-pinning';
import type { OrderWorkSweepDeps } from '../use-cases/order-work-sweep';
import type { CreationDeps, PurchaseOrderDeps } from '../use-cases/purchase-orders';
import { once, onFirstUse } from './once';
import { batchRepo, custodyRepo, ledgerWriteQueue, now, registryRepo } from './platform';

/**
 * Batches and their custody trail: submission, stage changes, purchase orders, and the evidence
 * they keep. Evidence is kept as docs/api/evidence.md#evidence-on-ipfs says: its CAR in the
 * service's own evidence bucket before the commit, then a pin job for the background pinner
 * (functions/evidence-pinner), so no stage change waits for IPFS. Photos may arrive by upload URL
 * (docs/api/evidence.md#evidence-photos-by-upload-url).
 */

/** Ports of batch submission. */
export function batchDeps(): BatchDeps {
  return { registry: registryRepo(), batches: batchRepo(), custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now };
}

/** Ports of stage changes. */
export function custodyDeps(): CustodyDeps {
  return { batches: batchRepo(), custody: custodyRepo(), evidence: evidenceKeeping(), ledgerQueue: ledgerWriteQueue(), now };
}

/** The order worker's queue (ORDER_WORK_QUEUE_URL): a large purchase order's per-batch work. */
export const orderWorkQueue = (): WorkQueue<OrderWorkMessage> =>
  once(orderWorkQueue, () => new SqsWorkQueue<OrderWorkMessage>('ORDER_WORK_QUEUE_URL'));

/** Large purchase orders with work for the order worker (the table's ORDER_WORK index). */
export const orderWorkIndex = (): OrderWorkIndex => once(orderWorkIndex, () => new OrderWorkRepository());

/** Ports of the purchase-order reconciler (functions/purchase-order-reconciler): stalled large orders' work queued again. */
export function orderWorkSweepDeps(): OrderWorkSweepDeps {
  return { orderWorkIndex: orderWorkIndex(), orderWork: orderWorkQueue(), now };
}

/** Ports of purchase-order creation (a large order's batches are bound by the order worker). */
export function purchaseOrderCreationDeps(): CreationDeps {
  return { batches: batchRepo(), custody: custodyRepo(), orderWork: orderWorkQueue(), now };
}

/** Ports of purchase-order confirmation (it commits WAREHOUSED → COMMITTED stage changes; a large order's steps go to the order worker). */
export function purchaseOrderDeps(): PurchaseOrderDeps {
  return { ...custodyDeps(), batches: batchRepo(), custody: custodyRepo(), orderWork: orderWorkQueue() };
}

// ---------------------------------------------------------------- evidence: the own copy and pinning

/**
 * The service's own copy of evidence: the bucket EVIDENCE_BUCKET (in AWS the stack's evidence
 * bucket; locally a bucket on fauxqs's S3, reached at AWS_ENDPOINT_URL_S3 as the SDK would), plain
 * SigV4-signed S3 requests, so write paths carry no S3 client. Configured on first use: a handler
 * that never touches evidence needs no EVIDENCE_BUCKET.
 */
export const evidenceArchive = (): EvidenceArchive =>
  once(evidenceArchive, () =>
    onFirstUse<EvidenceArchive>(
      () =>
        new S3EvidenceArchive({
          bucket: requireEnv('EVIDENCE_BUCKET'),
          region: envOr('AWS_REGION', 'us-east-1'),
          ...(process.env.AWS_ENDPOINT_URL_S3 ? { endpoint: process.env.AWS_ENDPOINT_URL_S3 } : {}),
        }),
    ),
  );

/** The background pinner's queue (EVIDENCE_PIN_QUEUE_URL). */
const evidencePinQueue = (): WorkQueue<EvidencePinMessage> =>
  once(evidencePinQueue, () => new SqsWorkQueue<EvidencePinMessage>('EVIDENCE_PIN_QUEUE_URL'));

/** Pin jobs and the pin status of each stage's evidence. */
const evidencePins = (): EvidencePinStatusStore => once(evidencePins, () => new EvidencePinRepository());

/** What write paths need to keep evidence: the own copy and the pin queue. */
export function evidenceKeeping(): EvidenceKeeping {
  return { archive: evidenceArchive(), pinQueue: evidencePinQueue() };
}

/** What reconciliation of evidence pins needs (shared/use-cases/evidence-pinning.ts requeueStalePins): the pin jobs and the pin queue. */
export function pinReconciliationDeps(): { statuses: EvidencePinStatusStore; pinQueue: WorkQueue<EvidencePinMessage>; now: () => Date } {
  return { statuses: evidencePins(), pinQueue: evidencePinQueue(), now };
}

/** The pinning service's credentials secret: `{access_key_id, secret_access_key}` (s3) or `{authorization?}` (kubo). */
interface PinningCredentials {
  access_key_id?: string;
  secret_access_key?: string;
  authorization?: string;
}

/**
 * The pinning service chosen by EVIDENCE_PINNING_API (docs/api/evidence.md#evidence-on-ipfs): `s3` — an S3-compatible IPFS
 * pinning API at EVIDENCE_PINNING_ENDPOINT, bucket EVIDENCE_PINNING_BUCKET, signing region
 * EVIDENCE_PINNING_REGION; `kubo` — a Kubo / IPFS Cluster RPC API at EVIDENCE_PINNING_ENDPOINT.
 * Credentials: the JSON secret EVIDENCE_PINNING_CREDENTIALS. The same code in AWS and locally (the
 * local stack points these variables at its sandbox).
 * Errors: the promise rejects on an unknown API, missing variables or credentials.
 */
const carPinner = (): Promise<CarPinner> =>
  once(carPinner, async () => {
    const api = requireEnv('EVIDENCE_PINNING_API');
    const endpoint = requireEnv('EVIDENCE_PINNING_ENDPOINT');
    const creds = JSON.parse(await secret('EVIDENCE_PINNING_CREDENTIALS', 'EVIDENCE_PINNING_CREDENTIALS_SECRET_ARN')) as PinningCredentials;
    if (api === 's3') {
      if (!creds.access_key_id || !creds.secret_access_key)
        throw new Error('EVIDENCE_PINNING_CREDENTIALS must hold {"access_key_id", "secret_access_key"} for EVIDENCE_PINNING_API=s3');
      return new S3CarPinner({
        endpoint,
        bucket: requireEnv('EVIDENCE_PINNING_BUCKET'),
        region: requireEnv('EVIDENCE_PINNING_REGION'),
        accessKeyId: creds.access_key_id,
        secretAccessKey: creds.secret_access_key,
      });
    }
    if (api === 'kubo')
      return new KuboCarPinner({ apiUrl: endpoint, ...(creds.authorization ? { authorization: creds.authorization } : {}) });
    throw new Error(`EVIDENCE_PINNING_API must be s3 or kubo, not ${JSON.stringify(api)}`);
  });

/** Ports of the background pinner. Errors: rejects when the pinning service is misconfigured (see carPinner). */
export async function evidencePinnerDeps(): Promise<EvidencePinnerDeps> {
  return { archive: evidenceArchive(), pinner: await carPinner(), statuses: evidencePins(), now };
}

// ---------------------------------------------------------------- evidence photos by upload URL

/**
 * The uploads bucket EVIDENCE_UPLOADS_BUCKET in AWS_REGION, reached through AWS_ENDPOINT_URL_S3
 * when set (the local stack's fauxqs, path-style; the SDK's own variable, so every S3 path of the
 * service agrees), else the regional S3 endpoint.
 */
function uploadsBucket(): S3BucketLocation {
  const endpoint = envOr('AWS_ENDPOINT_URL_S3', '');
  return { bucket: requireEnv('EVIDENCE_UPLOADS_BUCKET'), region: envOr('AWS_REGION', 'us-east-1'), ...(endpoint ? { endpoint } : {}) };
}

/** The upload records (the single table). */
const evidenceUploads = (): EvidenceUploadStore => once(evidenceUploads, () => new EvidenceUploadRepository());
/** Signed GETs of uploaded objects (what a stage update reads). */
const uploadReader = (): EvidenceUploadReader => once(uploadReader, () => new S3UploadReader(uploadsBucket()));
/** Presigned uploads (what POST /batch/{id}/evidence-uploads hands out). */
const uploadPresigner = (): EvidenceUploadObjects => once(uploadPresigner, () => new S3UploadPresigner(uploadsBucket()));

/** Ports that turn an upload into photo bytes (PATCH /batch/{id}/stage with evidence_upload_id). */
export function uploadedPhotoDeps(): UploadedPhotoDeps {
  return { uploads: evidenceUploads(), reader: uploadReader(), now };
}

/** Ports of POST /batch/{id}/evidence-uploads: the batch, the upload records and the presigner of the uploads bucket. */
export function evidenceUploadDeps(): EvidenceUploadDeps {
  return { batches: batchRepo(), uploads: evidenceUploads(), objects: uploadPresigner(), now };
}
