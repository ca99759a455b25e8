import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import type { Caller } from '../../shared/domain/caller';
import { buildDueDiligenceStatement, type StoredDdsRecord } from '../../shared/domain/dds';
import { ddsXmlOf, keepDdsDocuments, withDdsDocuments } from '../../shared/use-cases/dds-documents';
import { type DdsDeps, ddsRecordOf, keepAndQueueStatement, readDdsXml } from '../../shared/use-cases/eudr';
import {
  aBatch,
  aFarmer,
  fakeBatchStore,
  fakeCustodyStore,
  fakeDdsStore,
  fakeRegistryStore,
  fakeWorkQueue,
  memoryDdsDocumentStore,
} from './support/fakes';

/**
 * Where statements are kept (docs/api/eudr.md#where-statements-are-kept): the documents in the
 * document store, the table's record holding their key, size and SHA-256 only; reads check both;
 * a statement of the older inline form is read as it is.
 */

const admin: Caller = { sub: 'admin', role: 'ADMIN', duties: [] };

async function built() {
  const statement = buildDueDiligenceStatement({
    ddsId: 'DDS-2026-000001',
    internalReferenceNumber: 'DDS-2026-000001',
    batch: aBatch({ stage: 'GRADED' }),
    producers: [{ farmer: aFarmer() }],
    operator: {
      name: 'Hamburg Coffee Importers GmbH',
      eori: 'DE123456789012345',
      address: 'Am Sandtorkai 1, 20457 Hamburg',
      email: 'dds@hci.example',
      country: 'DE',
    },
    destinationCountry: 'DE',
    createdAt: '2026-11-22T10:00:00.000Z',
  });
  return ddsRecordOf({ documents: { submitRequestXml: submitDdsRequestXml } }, statement, 'COOP-1');
}

describe('statement documents in the document store', () => {
  it('keeps dds.json and dds.xml and stores a record without producers, plots or XML, which reads back whole', async () => {
    const store = memoryDdsDocumentStore();
    const b = await built();
    const stored = await keepDdsDocuments(store, b);
    for (const part of ['producers', 'geolocation', 'producer_net_weights_kg', 'xml']) expect(stored).not.toHaveProperty(part);
    expect(stored.documents!.xml).toEqual({
      key: expect.stringMatching(/^dds\/DDS-2026-000001\/[0-9a-f]{64}\.xml$/),
      size_bytes: new TextEncoder().encode(b.record.xml).byteLength,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(new TextDecoder().decode(store.objects.get(stored.documents!.statement.key))).toBe(b.json);
    expect(await withDdsDocuments(store, stored)).toEqual({ ...b.record, documents: stored.documents });
    expect(await ddsXmlOf(store, stored)).toBe(b.record.xml);
  });

  it('refuses a document whose bytes differ from the recorded size or SHA-256, or that is missing', async () => {
    const store = memoryDdsDocumentStore();
    const stored = await keepDdsDocuments(store, await built());
    const key = stored.documents!.xml.key;
    const bytes = store.objects.get(key)!;
    const tampered = new Uint8Array(bytes);
    tampered[10] = tampered[10]! ^ 1;
    store.objects.set(key, tampered);
    await expect(ddsXmlOf(store, stored)).rejects.toThrow(/SHA-256 .* not the/);
    store.objects.delete(key);
    await expect(withDdsDocuments(store, stored)).rejects.toThrow(/is missing from the document store/);
  });

  it('reads a statement of the older form, its parts inline, without the store', async () => {
    const b = await built();
    const store = memoryDdsDocumentStore();
    const inline: StoredDdsRecord = b.record;
    expect(await withDdsDocuments(store, inline)).toEqual(b.record);
    const deps = { dds: fakeDdsStore({ get: async () => inline }), documentStore: store };
    // Inline whatever its size: an older record's XML is in the table item already (at most 400 KB).
    expect(await readDdsXml(deps, admin, b.record.dds_id, { inlineMaxBytes: 0, now: new Date() })).toEqual({
      kind: 'inline',
      dds_id: b.record.dds_id,
      xml: b.record.xml,
    });
    expect(store.objects.size).toBe(0);
  });

  it('hands out the XML inline up to the threshold, above it a 5-minute link with the recorded size and SHA-256, reading nothing', async () => {
    const store = memoryDdsDocumentStore();
    const stored = await keepDdsDocuments(store, await built());
    const ref = stored.documents!.xml;
    const now = new Date('2026-11-22T10:00:00.000Z');
    let reads = 0;
    const counting = {
      ...store,
      get: async (key: string) => {
        reads++;
        return store.get(key);
      },
    };
    const deps = { dds: fakeDdsStore({ get: async () => stored }), documentStore: counting };

    const atLimit = await readDdsXml(deps, admin, stored.dds_id, { inlineMaxBytes: ref.size_bytes, now });
    expect(atLimit).toEqual({ kind: 'inline', dds_id: stored.dds_id, xml: new TextDecoder().decode(store.objects.get(ref.key)) });
    expect(reads).toBe(1);

    const above = await readDdsXml(deps, admin, stored.dds_id, { inlineMaxBytes: ref.size_bytes - 1, now });
    expect(above).toEqual({
      kind: 'link',
      dds_id: stored.dds_id,
      xml_url: `https://documents.test/${ref.key}?expires=300&name=${stored.dds_id}.xml`,
      size_bytes: ref.size_bytes,
      sha256: ref.sha256,
      expires_at: '2026-11-22T10:05:00.000Z',
    });
    expect(reads).toBe(1);
    // Another cooperative gets no link either.
    await expect(
      readDdsXml(deps, { sub: 'c', role: 'COOPERATIVE', cooperative_id: 'COOP-2', duties: [] }, stored.dds_id, { inlineMaxBytes: 0, now }),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
  });

  it('keepAndQueueStatement: documents first, then the record; a repeat returns the kept statement and writes no document', async () => {
    const store = memoryDdsDocumentStore();
    const rows = new Map<string, StoredDdsRecord>();
    const queued: string[] = [];
    const deps: DdsDeps = {
      batches: fakeBatchStore(),
      registry: fakeRegistryStore(),
      custody: fakeCustodyStore(),
      documents: { submitRequestXml: submitDdsRequestXml },
      documentStore: store,
      filingQueue: fakeWorkQueue('dds-filing', { send: async (m) => void queued.push(m.dds_id) }),
      now: () => new Date('2026-11-22T10:00:00.000Z'),
      dds: fakeDdsStore({
        get: async (id) => rows.get(id) ?? null,
        create: async (d) => {
          expect(store.objects.has(d.documents!.statement.key) && store.objects.has(d.documents!.xml.key)).toBe(true);
          rows.set(d.dds_id, d);
          return null;
        },
      }),
    };
    const b = await built();
    const first = await keepAndQueueStatement(deps, b);
    expect(first.created).toBe(true);
    expect(queued).toEqual(['DDS-2026-000001']);
    expect(rows.get('DDS-2026-000001')).not.toHaveProperty('xml');
    const again = await built();
    const before = store.objects.size;
    const repeat = await keepAndQueueStatement(deps, { ...again, json: `${again.json} ` });
    expect(repeat).toEqual({ dds: first.dds, created: false });
    expect(store.objects.size).toBe(before);
    expect(queued).toHaveLength(1);
  });
});
