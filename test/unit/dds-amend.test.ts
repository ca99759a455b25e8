import type { Caller } from '../../shared/domain/caller';
import { SoapDdsRegistry } from '../../shared/adapters/eudr/soap-dds-registry';
import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { buildShipmentStatement } from '../../shared/domain/dds-shipment';
import type { DdsRecord } from '../../shared/domain/dds';
import type { Farmer } from '../../shared/domain/records';
import { startDdsRegistrySandbox, type DdsRegistrySandbox, type DdsRegistrySandboxOptions } from '../../infra/local/dds-registry-sandbox';
import { amendDds, withdrawDds, type DdsAmendDeps } from '../../shared/use-cases/eudr-amend';
import { fileDds } from '../../shared/use-cases/eudr';
import { domainErrorOf, onTheWire } from './support/errors';
import {
  fakeBatchStore,
  fakeCustodyStore,
  fakeDdsRegistry,
  fakeDdsStore,
  memoryDdsDocumentStore,
  fakeNotifier,
  fakeRegistryStore,
  fakeWorkQueue,
} from './support/fakes';

const creds = { username: 'amend-user', authKey: 'amend-key', clientId: 'eudr-test' };
const farmer = (id: string, lat: number): Farmer =>
  ({
    farmer_id: id,
    full_name: `Farmer ${id}`,
    cooperative_id: 'C',
    district: 'Bulambuli',
    farm: { gps: { lat, lng: 34.2 }, area_ha: 1 },
    gfw_status: 'CLEAR',
  }) as Farmer;

function xml(description?: string, weight = 100): string {
  const f = [farmer('F-1', 1.1), farmer('F-2', 1.2)];
  return submitDdsRequestXml(
    buildShipmentStatement({
      ddsId: 'DDS-PO-T',
      internalReferenceNumber: `DDS-PO-T-${Math.random().toString(36).slice(2, 10)}`,
      purchaseOrderId: 'PO-T',
      batches: [
        { batch_id: 'BATCH-2026-000001', farmer_id: 'F-1', grade: 'screen18', stage: 'MILLED', outturn_kg: weight },
        { batch_id: 'BATCH-2026-000002', farmer_id: 'F-2', grade: 'FAQ', stage: 'MILLED', outturn_kg: 50 },
      ],
      farmers: new Map(f.map((x) => [x.farmer_id, x])),
      operator: {
        name: 'Importer GmbH',
        eori: 'DE123456789012345',
        address: 'Am Sandtorkai 1, 20457 Hamburg',
        email: 'a@b.example',
        country: 'DE',
      },
      ...(description ? { description } : {}),
      createdAt: '2026-11-27T00:00:00.000Z',
    }),
  );
}

async function until<T>(fn: () => Promise<T>, ok: (t: T) => boolean): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const t = await fn();
    if (ok(t)) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('timed out');
}

describe('amendDds and withdrawDds: the SOAP adapter against the registry sandbox', () => {
  let sandbox: DdsRegistrySandbox | undefined;
  afterEach(async () => sandbox?.stop());
  async function start(over: Partial<DdsRegistrySandboxOptions> = {}) {
    sandbox = await startDdsRegistrySandbox({ ...creds, availableAfterMs: 1000, ...over });
    return new SoapDdsRegistry({ endpoint: sandbox.url, ...creds });
  }
  async function available(registry: SoapDdsRegistry, body = xml()) {
    const internalReference = /internalReferenceNumber>([^<]+)</.exec(body)![1]!;
    const { uuid } = await registry.submit(body, { internalReference });
    const first = await until(
      () => registry.status(uuid),
      (s) => s.status === 'AVAILABLE',
    );
    return { uuid, first };
  }

  it('amends: SUBMITTED again, then AVAILABLE with the same reference and verification numbers', async () => {
    const registry = await start();
    const { uuid, first } = await available(registry);
    expect(await registry.amend(uuid, xml(undefined, 120))).toEqual({ status: 'SUBMITTED' });
    expect((await registry.status(uuid)).status).toBe('SUBMITTED');
    const again = await until(
      () => registry.status(uuid),
      (s) => s.status === 'AVAILABLE',
    );
    expect(again).toEqual(first);
    expect(sandbox!.modifications()).toEqual({ amended: 1, withdrawn: 0 });
  });

  it('withdraws: WITHDRAWN, as the V3 status list says; a second withdrawal is DDS_NOT_AVAILABLE', async () => {
    const registry = await start();
    const { uuid } = await available(registry);
    expect(await registry.withdraw(uuid)).toEqual({ status: 'WITHDRAWN' });
    expect(await registry.status(uuid)).toMatchObject({ registry_status: 'WITHDRAWN' });
    const err = await domainErrorOf(registry.withdraw(uuid));
    expect([err.code, onTheWire(err).status]).toEqual(['DDS_NOT_AVAILABLE', 422]);
  });

  it('refuses a locked statement (DDS_LOCKED), one past the window (DDS_AMENDMENT_WINDOW_CLOSED) and one not yet AVAILABLE', async () => {
    const registry = await start();
    const locked = await available(registry, xml('Green coffee CUSTOMS-LOCK'));
    expect((await domainErrorOf(registry.amend(locked.uuid, xml()))).code).toBe('DDS_LOCKED');
    expect((await domainErrorOf(registry.withdraw(locked.uuid))).code).toBe('DDS_LOCKED');
    await sandbox!.stop();
    const closed = await start({ amendmentWindowMs: 0 });
    const old = await available(closed);
    await new Promise((r) => setTimeout(r, 5));
    const err = await domainErrorOf(closed.amend(old.uuid, xml()));
    expect([err.code, onTheWire(err).status]).toEqual(['DDS_AMENDMENT_WINDOW_CLOSED', 422]);
    const body = xml();
    const { uuid } = await closed.submit(body, { internalReference: /internalReferenceNumber>([^<]+)</.exec(body)![1]! });
    expect((await domainErrorOf(closed.withdraw(uuid))).code).toMatch(/DDS_AMENDMENT_WINDOW_CLOSED|DDS_NOT_AVAILABLE/);
  });
});

const record = (over: Partial<DdsRecord> = {}): DdsRecord =>
  ({
    dds_id: 'DDS-PO-1',
    batch_id: null,
    purchase_order_id: 'PO-1',
    status: 'AVAILABLE',
    cooperative_id: 'C',
    registry_uuid: '0b7f2c1e-4a7d-4f6e-9a0b-3c2d1e0f9a8b',
    filed_at: '2026-11-24T00:00:00.000Z',
    created_at: '2026-11-24T00:00:00.000Z',
    reference_number: '26DEABCDEFGHIJ',
    // A statement of the older form: its parts inline in the record (no documents in the store).
    producers: [],
    geolocation: { type: 'FeatureCollection', features: [] },
    xml: '<v3:SubmitDdsRequest/>',
    ...over,
  }) as DdsRecord;

/** Amendment ports: every one refusing unexpected calls, but the given ones. */
function amendDeps(over: Pick<DdsAmendDeps, 'dds' | 'ddsRegistry' | 'now'>): DdsAmendDeps {
  return {
    batches: fakeBatchStore(),
    registry: fakeRegistryStore(),
    custody: fakeCustodyStore(),
    documents: {
      submitRequestXml: () => {
        throw new Error('unexpected call: documents.submitRequestXml');
      },
    },
    filingQueue: fakeWorkQueue('dds-filing'),
    documentStore: memoryDdsDocumentStore(),
    ...over,
  };
}

describe('amendDds / withdrawDds use cases', () => {
  const admin: Caller = { sub: 'admin', role: 'ADMIN', duties: [] };
  function deps(d: DdsRecord, now: string): DdsAmendDeps {
    return amendDeps({ dds: fakeDdsStore({ get: async () => d }), ddsRegistry: fakeDdsRegistry(), now: () => new Date(now) });
  }

  it('refuses 72 hours after submission without calling the Information System (422 DDS_AMENDMENT_WINDOW_CLOSED)', async () => {
    const late = deps(record(), '2026-11-27T00:00:01.000Z');
    for (const op of [amendDds, withdrawDds]) {
      const err = await domainErrorOf(op(late, admin, 'DDS-PO-1'));
      expect([err.code, onTheWire(err).status]).toEqual(['DDS_AMENDMENT_WINDOW_CLOSED', 422]);
    }
  });

  it('refuses a statement that is not AVAILABLE (422 DDS_NOT_AVAILABLE)', async () => {
    for (const status of ['PENDING_FILING', 'SUBMITTED', 'REJECTED', 'WITHDRAWN'] as const) {
      const err = await domainErrorOf(withdrawDds(deps(record({ status }), '2026-11-24T01:00:00.000Z'), admin, 'DDS-PO-1'));
      expect(err.code).toBe('DDS_NOT_AVAILABLE');
    }
  });

  it('withdraws within the window: withdrawDds, then WITHDRAWN; a concurrent change is 409 DUPLICATE_REQUEST', async () => {
    const withdrawn: string[] = [];
    const d = amendDeps({
      dds: fakeDdsStore({
        get: async () => record(),
        markWithdrawn: async (id) => {
          withdrawn.push(id);
          return withdrawn.length === 1;
        },
      }),
      ddsRegistry: fakeDdsRegistry({ withdraw: async () => ({ status: 'WITHDRAWN' }) }),
      now: () => new Date('2026-11-26T23:59:00.000Z'),
    });
    await withdrawDds(d, admin, 'DDS-PO-1');
    expect(withdrawn).toEqual(['DDS-PO-1']);
    expect((await domainErrorOf(withdrawDds(d, admin, 'DDS-PO-1'))).code).toBe('DUPLICATE_REQUEST');
  });
});

describe('fileDds: a withdrawal reaches every batch a statement covers', () => {
  it('records it on each covered batch of a WITHDRAWN statement (idempotent store call), and on none of a statement without numbers', async () => {
    const recorded: string[] = [];
    const d = record({
      status: 'WITHDRAWN',
      withdrawn_at: '2026-11-25T10:00:00.000Z',
      verification_number: 'ABCDEFGH',
      batch_ids: ['BATCH-2026-000001', 'BATCH-2026-000002'],
    });
    let current = d;
    const deps = {
      dds: fakeDdsStore({
        get: async () => current,
        recordWithdrawalOnBatch: async (b, ref, at) => {
          recorded.push(`${b}:${ref.dds_id}:${ref.reference_number}:${ref.verification_number}:${at}`);
          return true;
        },
      }),
      registry: fakeDdsRegistry(),
      notifier: fakeNotifier(),
      documentStore: memoryDdsDocumentStore(),
      now: () => new Date(),
    };
    await fileDds(deps, d.dds_id);
    expect(recorded.sort()).toEqual([
      'BATCH-2026-000001:DDS-PO-1:26DEABCDEFGHIJ:ABCDEFGH:2026-11-25T10:00:00.000Z',
      'BATCH-2026-000002:DDS-PO-1:26DEABCDEFGHIJ:ABCDEFGH:2026-11-25T10:00:00.000Z',
    ]);
    const { reference_number: _gone, ...withoutNumbers } = d;
    current = withoutNumbers;
    await fileDds(deps, d.dds_id);
    expect(recorded).toHaveLength(2);
  });

  it('withdrawDds queues the statement for the filer, which records the withdrawal on its batches', async () => {
    const queued: string[] = [];
    const d = amendDeps({
      dds: fakeDdsStore({ get: async () => record(), markWithdrawn: async () => true }),
      ddsRegistry: fakeDdsRegistry({ withdraw: async () => ({ status: 'WITHDRAWN' }) }),
      now: () => new Date('2026-11-26T23:59:00.000Z'),
    });
    const admin: Caller = { sub: 'admin', role: 'ADMIN', duties: [] };
    await withdrawDds(
      { ...d, filingQueue: fakeWorkQueue('dds-filing', { send: async (m) => void queued.push(m.dds_id) }) },
      admin,
      'DDS-PO-1',
    );
    expect(queued).toEqual(['DDS-PO-1']);
  });
});

describe('fileDds: the first status poll waits DDS_POLL_DELAY_S after the submission or amendment', () => {
  it('does not poll before the delay; throws for a redelivery when the delay is beyond its wait', async () => {
    const polls: number[] = [];
    const filedAt = new Date();
    const d = record({ status: 'SUBMITTED', filed_at: filedAt.toISOString() });
    const deps = {
      dds: fakeDdsStore({ get: async () => d, markAvailable: async () => true }),
      registry: fakeDdsRegistry({
        status: async () => {
          polls.push(Date.now() - filedAt.getTime());
          return { status: 'AVAILABLE', reference_number: '26DEABCDEFGHIJ', verification_number: 'ABCDEFGH' };
        },
      }),
      notifier: fakeNotifier({ publish: async () => ({ messageId: 'm-1' }) }),
      documentStore: memoryDdsDocumentStore(),
      now: () => new Date(),
    };
    await expect(fileDds(deps, d.dds_id, { waitMs: 50, firstPollDelayMs: 10_000 })).rejects.toThrow(/first status poll not before/);
    expect(polls).toEqual([]);
    await fileDds(deps, d.dds_id, { waitMs: 1000, firstPollDelayMs: 200 });
    expect(polls).toHaveLength(1);
    expect(polls[0]).toBeGreaterThanOrEqual(190);
  });
});

describe('fileDds: the numbers reach every batch a statement covers', () => {
  it('records them on each batch of a purchase order once AVAILABLE, and again on a redelivery (idempotent store call)', async () => {
    const recorded: string[] = [];
    let d = record({ status: 'SUBMITTED', filed_at: new Date(0).toISOString(), batch_ids: ['BATCH-2026-000001', 'BATCH-2026-000002'] });
    const deps = {
      dds: fakeDdsStore({
        get: async () => d,
        markAvailable: async () => {
          d = { ...d, status: 'AVAILABLE', reference_number: '26DEABCDEFGHIJ', verification_number: 'ABCDEFGH' };
          return true;
        },
        recordOnBatch: async (b, ref) => {
          recorded.push(`${b}:${ref.reference_number}:${ref.verification_number}`);
          return true;
        },
      }),
      registry: fakeDdsRegistry({
        status: async () => ({ status: 'AVAILABLE', reference_number: '26DEABCDEFGHIJ', verification_number: 'ABCDEFGH' }),
      }),
      notifier: fakeNotifier({ publish: async () => ({ messageId: 'm-1' }) }),
      documentStore: memoryDdsDocumentStore(),
      now: () => new Date(),
    };
    await fileDds(deps, d.dds_id);
    expect(recorded.sort()).toEqual(['BATCH-2026-000001:26DEABCDEFGHIJ:ABCDEFGH', 'BATCH-2026-000002:26DEABCDEFGHIJ:ABCDEFGH']);
    await fileDds(deps, d.dds_id);
    expect(recorded).toHaveLength(4);
  });
});
