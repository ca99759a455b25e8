import { createHash } from 'node:crypto';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { DdsDocumentRef } from '../../domain/dds';
import { DdsDocumentStoreUnavailableError } from '../../domain/errors';
import type { DdsDocumentStore } from '../../domain/ports/eudr';
import { S3SignedFetch, type S3BucketLocation, s3ErrorText } from './s3-signed-fetch';

/** The key prefix of statements' documents in the evidence bucket: private, outside `car/` and `files/` (what GET /ipfs and the pinner read). */
export const DDS_DOCUMENTS_PREFIX = 'dds/';

/** `dds/<dds_id>/<sha256>.json` (or `.xml`): a new object for every new content, so an amendment keeps the earlier one. */
function documentKey(ddsId: string, name: 'dds.json' | 'dds.xml', sha256: string): string {
  return `${DDS_DOCUMENTS_PREFIX}${ddsId}/${sha256}${name === 'dds.json' ? '.json' : '.xml'}`;
}

/**
 * Statements' documents (docs/api/eudr.md#where-statements-are-kept) in the service's own evidence
 * bucket under `dds/`, by plain SigV4-signed PutObject / GetObject ({@link S3SignedFetch}, with the
 * function role's credentials from the environment). PutObject sends Content-MD5 (which a bucket
 * under Object Lock requires) and the SHA-256 it is keyed by. Errors: DdsDocumentStoreUnavailableError
 * (503 DDS_DOCUMENT_STORE_UNAVAILABLE, Retry-After) when S3 cannot be reached, times out or answers 5xx; Error naming the object and the status for any other
 * refusal (a 403 is a configuration fault). A missing object is null (the reader may list `dds/`).
 */
export class S3DdsDocumentStore implements DdsDocumentStore {
  private readonly s3: S3SignedFetch;

  constructor(loc: S3BucketLocation, opts: { timeoutMs?: number; fetchImpl?: typeof fetch } = {}) {
    this.s3 = new S3SignedFetch({
      ...loc,
      credentials: fromEnv(),
      timeoutMs: opts.timeoutMs ?? 20_000,
      ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
    });
  }

  async put(ddsId: string, name: 'dds.json' | 'dds.xml', text: string): Promise<DdsDocumentRef> {
    const bytes = new TextEncoder().encode(text);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = documentKey(ddsId, name, sha256);
    const res = await this.request('PUT', key, bytes, {
      'content-type': name === 'dds.json' ? 'application/json' : 'application/xml; charset=utf-8',
      'content-md5': createHash('md5').update(bytes).digest('base64'),
      'x-amz-meta-sha256': sha256,
    });
    const body = await res.text().catch(() => '');
    if (!res.ok) this.fail('PutObject', key, res.status, body);
    return { key, size_bytes: bytes.byteLength, sha256 };
  }

  async get(key: string): Promise<Uint8Array | null> {
    const res = await this.request('GET', key);
    if (res.status === 404) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    if (!res.ok) this.fail('GetObject', key, res.status, await res.text().catch(() => ''));
    return new Uint8Array(await res.arrayBuffer());
  }

  /**
   * A presigned GetObject URL of `key`, valid `expiresInSeconds`, signed with the function role's
   * credentials (so it reaches exactly what the role may read: `dds/` with dds-documents:read); with
   * `downloadName`, S3 answers `Content-Disposition: attachment; filename="<downloadName>"`
   * (`response-content-disposition`, signed with the rest).
   */
  async url(key: string, expiresInSeconds: number, downloadName?: string): Promise<string> {
    return this.s3.presignGet(
      key,
      expiresInSeconds,
      undefined,
      downloadName ? { 'response-content-disposition': `attachment; filename="${downloadName.replace(/["\\]/g, '')}"` } : {},
    );
  }

  private async request(method: 'GET' | 'PUT', key: string, body?: Uint8Array, headers?: Record<string, string>): Promise<Response> {
    try {
      return await this.s3.send(method, key, body, headers);
    } catch (err) {
      throw new DdsDocumentStoreUnavailableError(undefined, err);
    }
  }

  private fail(operation: string, key: string, status: number, body: string): never {
    const failure = new Error(`S3 ${operation} ${this.s3.where(key)} answered ${status}: ${s3ErrorText(body)}`);
    if (status >= 500) throw new DdsDocumentStoreUnavailableError(undefined, failure);
    throw failure;
  }
}
