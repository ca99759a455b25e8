import { createHash } from 'node:crypto';
import { DDS_LARGE_PARTS, type DdsDocumentRef, type DdsRecord, type DueDiligenceStatement, type StoredDdsRecord } from '../domain/dds';
import type { DdsDocumentStore } from '../domain/ports/eudr';

/**
 * Where a statement's large parts live (docs/api/eudr.md#where-statements-are-kept): its canonical
 * JSON (`dds.json`) and its SubmitDdsRequest XML (`dds.xml`) in private object storage, the table's
 * record holding each one's key, size and SHA-256. A statement made before they moved there keeps
 * them inline in its record and is read as it is (no migration; an amendment moves it).
 */

/** A newly built statement: its full record and the exact text of `dds.json` (the XML is `record.xml`). */
export interface BuiltDds {
  record: DdsRecord;
  json: string;
}

/**
 * Keeps a built statement's two documents in the store (in parallel) and returns the record the
 * table holds: without its large parts, with `documents` naming where they are.
 * Errors: the store's (DdsDocumentStoreUnavailableError, 503 DDS_DOCUMENT_STORE_UNAVAILABLE).
 */
export async function keepDdsDocuments(store: DdsDocumentStore, built: BuiltDds): Promise<StoredDdsRecord> {
  const [statement, xml] = await Promise.all([
    store.put(built.record.dds_id, 'dds.json', built.json),
    store.put(built.record.dds_id, 'dds.xml', built.record.xml),
  ]);
  const stored: Record<string, unknown> = { ...built.record, documents: { statement, xml } };
  for (const part of DDS_LARGE_PARTS) delete stored[part];
  return stored as StoredDdsRecord;
}

/**
 * The text of one kept document, checked against its record: exactly `size_bytes` bytes whose
 * SHA-256 is `sha256`. Errors: Error naming the statement and key when it is missing or differs
 * (an internal fault, never the caller's); the store's.
 */
async function readDocument(store: DdsDocumentStore, ddsId: string, ref: DdsDocumentRef): Promise<string> {
  const bytes = await store.get(ref.key);
  if (!bytes) throw new Error(`DDS ${ddsId}: its document ${ref.key} is missing from the document store`);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.byteLength !== ref.size_bytes || sha256 !== ref.sha256) {
    throw new Error(
      `DDS ${ddsId}: its document ${ref.key} is ${bytes.byteLength} bytes with SHA-256 ${sha256}, not the ${ref.size_bytes} bytes with SHA-256 ${ref.sha256} recorded`,
    );
  }
  return new TextDecoder().decode(bytes);
}

/** The SubmitDdsRequest XML of a stored statement (from the store, or inline for an older one). Errors as {@link readDocument}. */
export async function ddsXmlOf(store: DdsDocumentStore, d: StoredDdsRecord): Promise<string> {
  if (d.documents) return readDocument(store, d.dds_id, d.documents.xml);
  if (d.xml === undefined) throw new Error(`DDS ${d.dds_id} has neither documents nor an inline XML`);
  return d.xml;
}

/** How long a link to a statement's XML stays valid, seconds: 5 minutes to start the download. */
const DDS_XML_URL_SECONDS = 300;

/**
 * A statement's XML as GET /eudr/dds/{id}/xml hands it out (docs/api/eudr.md#large-statements):
 * the text itself, or a short-lived link to its kept document with the size and SHA-256 it was
 * recorded with (so the downloader can check the bytes).
 */
export type DdsXmlDelivery =
  | { kind: 'inline'; dds_id: string; xml: string }
  | { kind: 'link'; dds_id: string; xml_url: string; size_bytes: number; sha256: string; expires_at: string };

/**
 * The XML of a stored statement, inline when its kept document is at most `inlineMaxBytes` bytes
 * (or the statement is of the older inline form), else a link to it valid 5 minutes from `now`
 * (`expires_at`, ISO 8601), named `<dds_id>.xml` for download. A link is made without reading
 * the document. Errors: as {@link readDocument} for an inline one; the store's.
 */
export async function ddsXmlDelivery(
  store: DdsDocumentStore,
  d: StoredDdsRecord,
  opts: { inlineMaxBytes: number; now: Date },
): Promise<DdsXmlDelivery> {
  const ref = d.documents?.xml;
  if (!ref || ref.size_bytes <= opts.inlineMaxBytes) return { kind: 'inline', dds_id: d.dds_id, xml: await ddsXmlOf(store, d) };
  return {
    kind: 'link',
    dds_id: d.dds_id,
    xml_url: await store.url(ref.key, DDS_XML_URL_SECONDS, `${d.dds_id}.xml`),
    size_bytes: ref.size_bytes,
    sha256: ref.sha256,
    expires_at: new Date(opts.now.getTime() + DDS_XML_URL_SECONDS * 1000).toISOString(),
  };
}

/**
 * A stored statement with its large parts: producers, plots, each producer's green weight and the
 * XML, read from the store (both documents in parallel), or as they are for an older inline record.
 * Errors as {@link readDocument}.
 */
export async function withDdsDocuments(store: DdsDocumentStore, d: StoredDdsRecord): Promise<DdsRecord> {
  if (!d.documents) {
    if (d.xml === undefined || d.producers === undefined || d.geolocation === undefined)
      throw new Error(`DDS ${d.dds_id} has neither documents nor its parts inline`);
    return d as DdsRecord;
  }
  const [json, xml] = await Promise.all([
    readDocument(store, d.dds_id, d.documents.statement),
    readDocument(store, d.dds_id, d.documents.xml),
  ]);
  const statement = JSON.parse(json) as DueDiligenceStatement;
  return {
    ...d,
    producers: statement.producers,
    geolocation: statement.geolocation,
    ...(statement.producer_net_weights_kg ? { producer_net_weights_kg: statement.producer_net_weights_kg } : {}),
    xml,
  };
}
