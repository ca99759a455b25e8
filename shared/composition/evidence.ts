import { S3EvidenceArchive } from '../adapters/aws/s3-evidence-archive';
import { SqsWorkQueue } from '../adapters/aws/queues';
import { envOr, requireEnv } from '../config';
import type { EvidenceArchive, EvidencePinMessage } from '../domain/ports/evidence';
import type { WorkQueue } from '../domain/ports/messaging';
import type { EvidenceKeeping } from '../use-cases/evidence-pinning';
import { EvidencePinRepository } from '../adapters/dynamodb/evidence-pin-repo';

/**
 * The service's own copy of evidence (docs/api/evidence.md#evidence-on-ipfs): the bucket EVIDENCE_BUCKET (in AWS the
 * stack's evidence bucket; locally a bucket on fauxqs's S3, reached at AWS_ENDPOINT_URL_S3 as the
 * SDK would), plain SigV4-signed S3 requests, so write paths carry no S3 client.
 */
let archive: EvidenceArchive | undefined;
/** The own copy, configured on first use (a handler that never touches evidence needs no EVIDENCE_BUCKET). */
export function evidenceArchive(): EvidenceArchive {
  const real = () =>
    (archive ??= new S3EvidenceArchive({
      bucket: requireEnv('EVIDENCE_BUCKET'),
      region: envOr('AWS_REGION', 'us-east-1'),
      ...(process.env.AWS_ENDPOINT_URL_S3 ? { endpoint: process.env.AWS_ENDPOINT_URL_S3 } : {}),
    }));
  return {
    putCar: (root, car, files) => real().putCar(root, car, files),
    getCar: (root) => real().getCar(root),
    fileUrl: (root, path) => real().fileUrl(root, path),
  };
}

/** The background pinner's queue (EVIDENCE_PIN_QUEUE_URL). */
const evidencePinQueue = (): WorkQueue<EvidencePinMessage> => new SqsWorkQueue<EvidencePinMessage>('EVIDENCE_PIN_QUEUE_URL');

/** What reconciliation of evidence pins needs (shared/use-cases/evidence-pinning.ts requeueStalePins): the pin jobs and the pin queue. */
export function pinReconciliationDeps() {
  return { statuses: new EvidencePinRepository(), pinQueue: evidencePinQueue(), now: () => new Date() };
}

/** What write paths need to keep evidence: the own copy and the pin queue. */
export function evidenceKeeping(): EvidenceKeeping {
  return { archive: evidenceArchive(), pinQueue: evidencePinQueue() };
}
