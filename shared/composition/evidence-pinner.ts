import { EvidencePinRepository } from '../adapters/dynamodb/evidence-pin-repo';
import { KuboCarPinner } from '../adapters/ipfs/kubo-car-pinner';
import { S3CarPinner } from '../adapters/ipfs/s3-car-pinner';
import { requireEnv, secret } from '../config';
import type { CarPinner } from '../domain/ports/evidence';
import type { EvidencePinnerDeps } from '../use-cases/evidence-pinning';
import { evidenceArchive } from './evidence';
import { now } from './repos';

/** The pinning service's credentials secret: `{access_key_id, secret_access_key}` (s3) or `{authorization?}` (kubo). */
interface PinningCredentials {
  access_key_id?: string;
  secret_access_key?: string;
  authorization?: string;
}

let pinnerP: Promise<CarPinner> | undefined;

/**
 * The pinning service chosen by EVIDENCE_PINNING_API (docs/api/evidence.md#evidence-on-ipfs): `s3` — an S3-compatible IPFS
 * pinning API at EVIDENCE_PINNING_ENDPOINT, bucket EVIDENCE_PINNING_BUCKET, signing region
 * EVIDENCE_PINNING_REGION; `kubo` — a Kubo / IPFS Cluster RPC API at EVIDENCE_PINNING_ENDPOINT.
 * Credentials: the JSON secret EVIDENCE_PINNING_CREDENTIALS. The same code in AWS and locally (the
 * local stack points these variables at its sandbox).
 * Errors: the promise rejects on an unknown API, missing variables or credentials.
 */
function carPinner(): Promise<CarPinner> {
  pinnerP ??= (async () => {
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
  })();
  pinnerP.catch(() => (pinnerP = undefined));
  return pinnerP;
}

/** Ports of the background pinner. */
export async function evidencePinnerDeps(): Promise<EvidencePinnerDeps> {
  return { archive: evidenceArchive(), pinner: await carPinner(), statuses: new EvidencePinRepository(), now };
}
