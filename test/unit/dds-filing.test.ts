import { buildDueDiligenceStatement, type DdsRecord } from '../../shared/domain/dds';
import { fileDds } from '../../shared/use-cases/eudr';
import { aBatch, aFarmer, fakeDdsRegistry, fakeDdsStore, fakeNotifier, memoryDdsDocumentStore } from './support/fakes';

/**
 * The DDS filing worker: files once, then waits in the same invocation for the reference numbers
 * the EU Information System assigns seconds later (issue 9: the wait used to be a queue
 * redelivery — 1 s locally, the 180 s visibility timeout in AWS).
 */

function record(over: Partial<DdsRecord> = {}): DdsRecord {
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
  return {
    ...statement,
    status: 'PENDING_FILING',
    cooperative_id: 'COOP-1',
    ipfs_cid: 'bafy',
    ipfs_url: 'https://ipfs.example/ipfs/bafy',
    xml: '<x/>',
    ...over,
  };
}

function deps(availableAfterChecks: number) {
  let stored = record();
  let checks = 0;
  const calls: string[] = [];
  return {
    calls,
    deps: {
      now: () => new Date('2026-11-22T10:00:01.000Z'),
      documentStore: memoryDdsDocumentStore(),
      dds: fakeDdsStore({
        get: async () => stored,
        markSubmitted: async (_id: string, uuid: string) => {
          calls.push(`submitted ${uuid}`);
          stored = { ...stored, status: 'SUBMITTED', registry_uuid: uuid };
        },
        markAvailable: async (_id: string, ref: string) => {
          calls.push(`available ${ref}`);
          return true;
        },
      }),
      registry: fakeDdsRegistry({
        submit: async () => ({ uuid: 'uuid-1' }),
        status: async () =>
          ++checks > availableAfterChecks
            ? { status: 'AVAILABLE' as const, reference_number: '26UGXXXX000001', verification_number: 'VN000001' }
            : { status: 'SUBMITTED' as const },
      }),
      notifier: fakeNotifier({
        publish: async () => {
          calls.push('notified');
          return { messageId: 'm1' };
        },
      }),
    },
    checks: () => checks,
  };
}

describe('fileDds', () => {
  it('waits within the invocation for the reference numbers the registry assigns after filing', async () => {
    const f = deps(3);
    await fileDds(f.deps, 'DDS-2026-000001', { waitMs: 2_000, pollMs: 5 });
    expect(f.calls).toEqual(['submitted uuid-1', 'available 26UGXXXX000001', 'notified']);
    expect(f.checks()).toBe(4);
  });

  it('throws when the numbers are still not there after the wait, so the queue tries again (the filing is not repeated)', async () => {
    const f = deps(1_000);
    await expect(fileDds(f.deps, 'DDS-2026-000001', { waitMs: 30, pollMs: 5 })).rejects.toThrow('numbers not available yet');
    expect(f.calls).toEqual(['submitted uuid-1']);
  });
});
