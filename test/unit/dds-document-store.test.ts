import { createHash, createHmac } from 'node:crypto';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as getDdsXml } from '../../functions/get-dds-xml/handler';
import { S3DdsDocumentStore } from '../../shared/adapters/aws/s3-dds-documents';
import { S3SignedFetch } from '../../shared/adapters/aws/s3-signed-fetch';
import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { buildDueDiligenceStatement } from '../../shared/domain/dds';
import { DdsDocumentStoreUnavailableError, DomainError, isUnavailableCode } from '../../shared/domain/errors';
import { domainErrorResponse } from '../../shared/http/envelope';
import { openApiDocument } from '../../shared/http/openapi';
import { errorCodesFor } from '../../shared/http/openapi-responses';
import { ROUTES } from '../../shared/http/routes';
import { keepDdsDocuments } from '../../shared/use-cases/dds-documents';
import { ddsRecordOf } from '../../shared/use-cases/eudr';
import { ADMIN, expectErrorEnvelope } from './support/api-event';
import { aBatch, aFarmer, memoryDdsDocumentStore } from './support/fakes';
import { call, useHandlerMocks } from './support/handler-fixtures';

/**
 * An outage of the statements' document store (docs/api/eudr.md#where-statements-are-kept) is its
 * own code: 503 DDS_DOCUMENT_STORE_UNAVAILABLE with Retry-After, not the audit log's
 * AUDIT_LOG_UNAVAILABLE; every route that reads or keeps the documents declares it.
 */

const { ddb } = useHandlerMocks();
const loc = { bucket: 'evidence', region: 'eu-west-1', endpoint: 'http://s3.local:4566' };

beforeAll(() => {
  process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
});

describe('S3DdsDocumentStore while S3 is out', () => {
  const answering = (status: number) =>
    new S3DdsDocumentStore(loc, { fetchImpl: (async () => new Response('<Error><Code>X</Code></Error>', { status })) as typeof fetch });

  it.each([500, 503])('answers DDS_DOCUMENT_STORE_UNAVAILABLE (retry after 5 s) when S3 answers %i, on put and get', async (status) => {
    for (const attempt of [answering(status).put('DDS-1', 'dds.xml', '<x/>'), answering(status).get('dds/DDS-1/a.xml')]) {
      const err = await attempt.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DdsDocumentStoreUnavailableError);
      expect(err).toMatchObject({ code: 'DDS_DOCUMENT_STORE_UNAVAILABLE', retryAfterSeconds: 5 });
    }
  });

  it('answers DDS_DOCUMENT_STORE_UNAVAILABLE when S3 cannot be reached', async () => {
    const unreachable = new S3DdsDocumentStore(loc, {
      fetchImpl: (async () => {
        throw new TypeError('fetch failed');
      }) as typeof fetch,
    });
    await expect(unreachable.get('dds/DDS-1/a.json')).rejects.toMatchObject({ code: 'DDS_DOCUMENT_STORE_UNAVAILABLE' });
  });

  it('keeps a refusal (403) a server fault, not an outage', async () => {
    const err = await answering(403)
      .get('dds/DDS-1/a.json')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DomainError);
  });
});

describe('DDS_DOCUMENT_STORE_UNAVAILABLE on the wire', () => {
  it('is a 503 with Retry-After in the error envelope, and a code workers retry', () => {
    expect(isUnavailableCode('DDS_DOCUMENT_STORE_UNAVAILABLE')).toBe(true);
    const res = domainErrorResponse(new DdsDocumentStoreUnavailableError(), 'req-1');
    expect(res.statusCode).toBe(503);
    expect(res.headers['Retry-After']).toBe('5');
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'DDS_DOCUMENT_STORE_UNAVAILABLE', request_id: 'req-1' });
  });

  it('is declared by every route that reads or keeps statement documents, as a 503 of its OpenAPI operation', () => {
    const doc = openApiDocument('http://127.0.0.1:3000') as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const withDocuments = ROUTES.filter((r) => r.needs.some((n) => n.startsWith('dds-documents:')));
    expect(withDocuments.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [
        'GET /eudr/dds/{id}',
        'GET /eudr/dds/{id}/evidence',
        'GET /eudr/dds/{id}/xml',
        'POST /eudr/dds/{id}/amend',
        'POST /eudr/dds/{id}/withdraw',
        'POST /eudr/generate-dds',
      ].sort(),
    );
    for (const r of withDocuments) {
      expect([r.path, errorCodesFor(r)]).toEqual([r.path, expect.arrayContaining(['DDS_DOCUMENT_STORE_UNAVAILABLE'])]);
      expect(doc.paths[r.path]![r.method.toLowerCase()]!.responses['503']!.description).toContain('DDS_DOCUMENT_STORE_UNAVAILABLE');
    }
  });

  it('GET /eudr/dds/{id}/xml answers 503 DDS_DOCUMENT_STORE_UNAVAILABLE with Retry-After while S3 cannot be reached', async () => {
    await storedStatement();

    const res = await call(getDdsXml, xmlRequest);

    expectErrorEnvelope(res, 503, 'DDS_DOCUMENT_STORE_UNAVAILABLE');
    expect(res.headers['Retry-After']).toBe('5');
  });
});

describe('GET /eudr/dds/{id}/xml of an XML above DDS_XML_INLINE_MAX_BYTES', () => {
  afterEach(() => {
    delete process.env.DDS_XML_INLINE_MAX_BYTES;
  });

  it('answers 303 to a 5-minute presigned GET of the kept document, the link in the body too, without reading S3', async () => {
    const record = await storedStatement();
    process.env.DDS_XML_INLINE_MAX_BYTES = String(record.documents!.xml.size_bytes - 1);

    // The S3 endpoint refuses connections: a read would answer 503.
    const res = await call(getDdsXml, xmlRequest);

    expect(res.status).toBe(303);
    expect(res.headers['cache-control']).toBe('no-store');
    const location = new URL(res.headers.location!);
    expect(`${location.origin}${location.pathname}`).toBe(`http://127.0.0.1:9/evidence/${record.documents!.xml.key}`);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(location.searchParams.get('response-content-disposition')).toBe('attachment; filename="DDS-2026-000001.xml"');
    expect(location.search).toContain('response-content-disposition=attachment%3B%20filename%3D%22DDS-2026-000001.xml%22');
    expect(res.body).toEqual({
      dds_id: 'DDS-2026-000001',
      xml_url: res.headers.location,
      size_bytes: record.documents!.xml.size_bytes,
      sha256: record.documents!.xml.sha256,
      expires_at: expect.any(String),
    });
    const left = Date.parse(res.body.expires_at) - Date.now();
    expect(left).toBeGreaterThan(290_000);
    expect(left).toBeLessThanOrEqual(300_000);
  });

  it('answers the XML itself at the threshold', async () => {
    const record = await storedStatement();
    process.env.DDS_XML_INLINE_MAX_BYTES = String(record.documents!.xml.size_bytes);

    const res = await call(getDdsXml, xmlRequest);

    // Inline means reading the document: the refused connection answers 503 rather than a link.
    expectErrorEnvelope(res, 503, 'DDS_DOCUMENT_STORE_UNAVAILABLE');
  });
});

const xmlRequest = {
  method: 'GET',
  path: '/eudr/dds/DDS-2026-000001/xml',
  caller: ADMIN,
  resource: '/eudr/dds/{id}/xml',
  pathParameters: { id: 'DDS-2026-000001' },
};

/** A kept statement of COOP-1 whose record the table answers; S3 at a loopback port where nothing listens. */
async function storedStatement() {
  const statement = buildDueDiligenceStatement({
    ddsId: 'DDS-2026-000001',
    internalReferenceNumber: 'DDS-2026-000001',
    batch: aBatch({ stage: 'GRADED' }),
    producers: [{ farmer: aFarmer() }],
    operator: { name: 'HCI GmbH', eori: 'DE123456789012345', address: 'Am Sandtorkai 1, Hamburg', email: 'dds@hci.example', country: 'DE' },
    destinationCountry: 'DE',
    createdAt: '2026-11-22T10:00:00.000Z',
  });
  const record = await keepDdsDocuments(
    memoryDdsDocumentStore(),
    await ddsRecordOf({ documents: { submitRequestXml: submitDdsRequestXml } }, statement, 'COOP-1'),
  );
  process.env.EVIDENCE_BUCKET = 'evidence';
  // Nothing listens on port 9 of the loopback: the connection is refused at once.
  process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:9';
  ddb.on(GetCommand).resolves({ Item: { PK: 'DDS#DDS-2026-000001', SK: 'META', ...record } });
  return record;
}

describe('S3SignedFetch presigned GET with a response header override', () => {
  it('signs response-content-disposition exactly as @aws-sdk/s3-request-presigner does, RFC 3986 encoded', async () => {
    class Sha256 {
      private readonly h;
      constructor(secret?: string | Uint8Array) {
        this.h =
          secret === undefined ? createHash('sha256') : createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret));
      }
      update(d: string | Uint8Array) {
        this.h.update(typeof d === 'string' ? d : Buffer.from(d));
      }
      async digest() {
        return new Uint8Array(this.h.digest());
      }
      reset() {}
    }
    const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'session' };
    const signingDate = new Date('2026-11-22T12:00:00Z');
    const query = { 'response-content-disposition': 'attachment; filename="DDS-PO-1.xml"' };
    const url = await new S3SignedFetch({ bucket: 'evidence-bucket', region: 'eu-west-1', credentials }).presignGet(
      'dds/DDS-PO-1/abc.xml',
      300,
      signingDate,
      query,
    );
    const host = 'evidence-bucket.s3.eu-west-1.amazonaws.com';
    const sdk = await new S3RequestPresigner({ credentials, region: 'eu-west-1', sha256: Sha256 as never }).presign(
      { method: 'GET', protocol: 'https:', hostname: host, path: '/dds/DDS-PO-1/abc.xml', query, headers: { host } } as never,
      { expiresIn: 300, signingDate },
    );
    expect(Object.fromEntries(new URL(url).searchParams)).toEqual(sdk.query);
    expect(url).not.toContain('+');
    expect(url).toContain('attachment%3B%20filename%3D%22DDS-PO-1.xml%22');
  });
});
