import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import { CarReader } from '@ipld/car/reader';
import { CarWriter } from '@ipld/car/writer';
import { CID } from 'multiformats/cid';
import { buildEvidencePackage, buildUnixfsDirectory, canonicalEvidenceBytes } from '../../shared/domain/evidence-package';
import { exportCar, InvalidCarError, PinRootMismatchError } from '../../shared/domain/evidence-car';
import { filesOfCar, readVerifiedCar } from '../../shared/domain/evidence-car-reader';
import { S3EvidenceArchive } from '../../shared/adapters/aws/s3-evidence-archive';
import { S3SignedFetch } from '../../shared/adapters/aws/s3-signed-fetch';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { createHash, createHmac } from 'node:crypto';
import { S3CarPinner } from '../../shared/adapters/ipfs/s3-car-pinner';
import { KuboCarPinner } from '../../shared/adapters/ipfs/kubo-car-pinner';
import { startIpfsPinningSandbox, type IpfsPinningSandbox } from '../../infra/local/ipfs-pinning-sandbox';
import { ipfsGatewayHandler } from '../../infra/local/ipfs-gateway-route';
import { flushMetrics, setMetricsSink } from '../../shared/runtime/metrics';
import { archiveEvidence, MAX_PIN_REQUEUES, pinEvidence, requeueStalePins } from '../../shared/use-cases/evidence-pinning';
import { readIpfsPath } from '../../shared/use-cases/ipfs-read';
import { changeStage, type CustodyDeps } from '../../shared/use-cases/custody';
import type { EvidencePinMessage, EvidencePinStatusStore } from '../../shared/domain/ports/evidence';
import type { EvidencePinStatus } from '../../shared/domain/records';
import { aBatch, fakeBatchStore, fakeCustodyStore, fakeEvidenceKeeping, fakeWorkQueue } from './support/fakes';

const EVIDENCE = { grade: 'screen18', moisture_pct: 11.5, notes: 'évidence ✓' };
/** A small JPEG-looking payload (the importer does not care about the format). */
const PHOTO = new Uint8Array(300_000).map((_, i) => (i * 31) % 251);

describe('CAR export of an evidence package', () => {
  it('writes one root (ours) and every block; read back, each block re-hashes to its CID and the files re-import to the root', async () => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
    const car = await exportCar(pkg.cid, pkg.blocks);
    const reader = await CarReader.fromBytes(car);
    expect((await reader.getRoots()).map((r) => r.toString())).toEqual([pkg.cid]);
    const cids: string[] = [];
    for await (const b of reader.blocks()) cids.push(b.cid.toString());
    expect(cids).toEqual(pkg.blocks.map((b) => b.cid));
    const verified = await readVerifiedCar(car);
    expect(verified.root).toBe(pkg.cid);
    const { files } = await filesOfCar(car);
    expect(files.map((f) => f.path)).toEqual(['evidence.json', 'photo.jpg']);
    expect(files[0]!.bytes).toEqual(canonicalEvidenceBytes(EVIDENCE));
    expect((await buildUnixfsDirectory(files)).cid).toBe(pkg.cid);
  });

  it('is byte for byte what @ipld/car CarWriter writes for the same root and blocks', async () => {
    for (const input of [{ evidence: EVIDENCE }, { evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } }]) {
      const pkg = await buildEvidencePackage(input);
      const { writer, out } = CarWriter.create([CID.parse(pkg.cid)]);
      const chunks: Uint8Array[] = [];
      const drained = (async () => {
        for await (const c of out) chunks.push(c);
      })();
      for (const b of pkg.blocks) await writer.put({ cid: CID.parse(b.cid), bytes: b.bytes });
      await writer.close();
      await drained;
      expect(Buffer.from(await exportCar(pkg.cid, pkg.blocks)).equals(Buffer.concat(chunks))).toBe(true);
    }
  });

  it('refuses a root that is not among the blocks, a tampered block, and a CAR missing a block', async () => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
    const other = await buildEvidencePackage({ evidence: { other: 1 } });
    await expect(exportCar(other.cid, pkg.blocks)).rejects.toThrow(InvalidCarError);

    const tampered = pkg.blocks.map((b, i) =>
      i === 1 ? { cid: b.cid, bytes: new Uint8Array(b.bytes).map((x, j) => (j === 0 ? x ^ 1 : x)) } : b,
    );
    await expect(readVerifiedCar(await exportCar(pkg.cid, tampered))).rejects.toThrow(/do not hash to its CID/);

    const missing = pkg.blocks.filter((_, i) => i !== pkg.blocks.length - 1);
    await expect(readVerifiedCar(await exportCar(pkg.cid, missing))).rejects.toThrow(/incomplete/);
    await expect(readVerifiedCar(new Uint8Array([1, 2, 3]))).rejects.toThrow(/Not a CAR/);
  });
});

describe('against fauxqs S3 and the pinning sandbox', () => {
  let fauxqs: Awaited<ReturnType<typeof startFauxqs>>;
  let sandbox: IpfsPinningSandbox;
  const saved = { ...process.env };
  const creds = { accessKeyId: 'TESTKEY', secretAccessKey: 'test-secret' };

  beforeAll(async () => {
    fauxqs = await startFauxqs({ port: 0, logger: false });
    fauxqs.createBucket('evidence-test');
    fauxqs.createBucket('pinning-storage-test');
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_S3: fauxqs.address,
      EVIDENCE_BUCKET: 'evidence-test',
    });
    sandbox = await startIpfsPinningSandbox({
      bucket: 'pins',
      ...creds,
      storage: { endpoint: fauxqs.address, bucket: 'pinning-storage-test' },
    });
  });
  afterAll(async () => {
    await sandbox.stop();
    await fauxqs.stop();
    process.env = saved;
  });
  const pinner = (over: Partial<ConstructorParameters<typeof S3CarPinner>[0]> = {}) =>
    new S3CarPinner({ endpoint: sandbox.url, bucket: 'pins', region: 'us-east-1', ...creds, ...over });

  it('S3CarPinner: PutObject with import=car; the sandbox verifies the CAR and answers our root; HeadObject shows it', async () => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
    await pinner().pinCar({
      root: pkg.cid,
      car: await exportCar(pkg.cid, pkg.blocks),
      name: 'BATCH-1-GRADED',
      meta: { batch_id: 'BATCH-1' },
    });
    expect(sandbox.pinned()).toContain(pkg.cid);
    const s3 = new S3Client({ endpoint: sandbox.url, region: 'us-east-1', forcePathStyle: true, credentials: creds });
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'pins', Key: `${pkg.cid}.car` }));
    expect(head.Metadata?.cid).toBe(pkg.cid);
    expect(head.Metadata?.import).toBe('car');
    s3.destroy();
  });

  it('S3CarPinner fails loudly, naming both CIDs, when the service answers another root', async () => {
    const pkg = await buildEvidencePackage({ evidence: { mismatch: true } });
    const wrong = (await buildEvidencePackage({ evidence: { other: true } })).cid;
    sandbox.faults.reportRoot = wrong;
    try {
      const err = await pinner()
        .pinCar({ root: pkg.cid, car: await exportCar(pkg.cid, pkg.blocks), name: 'x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PinRootMismatchError);
      expect((err as Error).message).toContain(pkg.cid);
      expect((err as Error).message).toContain(wrong);
    } finally {
      delete sandbox.faults.reportRoot;
    }
  });

  it('the sandbox refuses a bad signature and a CAR whose blocks do not match', async () => {
    const pkg = await buildEvidencePackage({ evidence: { sig: true } });
    await expect(
      pinner({ secretAccessKey: 'wrong' }).pinCar({ root: pkg.cid, car: await exportCar(pkg.cid, pkg.blocks), name: 'x' }),
    ).rejects.toThrow(/signature/i);
    const tampered = pkg.blocks.map((b) => ({ cid: b.cid, bytes: new Uint8Array([...b.bytes, 0]) }));
    await expect(pinner().pinCar({ root: pkg.cid, car: await exportCar(pkg.cid, tampered), name: 'x' })).rejects.toThrow(
      /could not be imported/,
    );
  });

  it('S3EvidenceArchive: SigV4 PutObject / GetObject of car/<cid>.car; an unknown CID is null', async () => {
    const archive = new S3EvidenceArchive({ bucket: 'evidence-test', region: 'us-east-1', endpoint: fauxqs.address });
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE });
    const car = await exportCar(pkg.cid, pkg.blocks);
    await archive.putCar(pkg.cid, car);
    expect(await archive.getCar(pkg.cid)).toEqual(car);
    expect(await archive.getCar((await buildEvidencePackage({ evidence: { nope: 1 } })).cid)).toBeNull();
  });

  it('GET /ipfs/{cid}[/{name}] (get-ipfs through the local route): listing, exact bytes that recompute the CID, 404, 400', async () => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
    await archiveEvidence(
      { archive: new S3EvidenceArchive({ bucket: 'evidence-test', region: 'us-east-1', endpoint: fauxqs.address }) },
      pkg.cid,
      pkg.blocks,
      pkg.files,
    );
    const route = ipfsGatewayHandler(async () => (await import('../../functions/get-ipfs/handler')).handler as never);
    const server: Server = createServer((req, res) => void route(req, res, new URL(req.url ?? '/', 'http://local')));
    // A loaded machine can leave a pooled connection idle past Node's 5 s keep-alive; the server
    // would then close it just as fetch reuses it (ECONNRESET), which says nothing of the route.
    server.keepAliveTimeout = 120_000;
    const unknown = (await buildEvidencePackage({ evidence: { unknown: true } })).cid;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const list = await fetch(`${base}/ipfs/${pkg.cid}`);
      expect(list.status).toBe(200);
      expect(list.headers.get('cache-control')).toContain('immutable');
      const body = (await list.json()) as { cid: string; entries: Array<{ name: string; size: number }> };
      expect(body.cid).toBe(pkg.cid);
      expect(body.entries.map((e) => [e.name, e.size])).toEqual([
        ['evidence.json', canonicalEvidenceBytes(EVIDENCE).length],
        ['photo.jpg', PHOTO.length],
      ]);
      // A photo: 302 to a presigned URL of the own copy's object, which answers the exact bytes.
      const photo = await fetch(`${base}/ipfs/${pkg.cid}/photo.jpg`, { redirect: 'manual' });
      expect(photo.status).toBe(302);
      expect(photo.headers.get('location')).toMatch(
        new RegExp(`/evidence-test/files/${pkg.cid}/photo\\.jpg\\?.*X-Amz-Signature=[0-9a-f]{64}`),
      );
      const followed = await fetch(`${base}/ipfs/${pkg.cid}/photo.jpg`);
      expect([followed.status, followed.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
      // A text file: inline, immutable.
      const json = await fetch(`${base}/ipfs/${pkg.cid}/evidence.json`, { redirect: 'manual' });
      expect([json.status, json.headers.get('content-type'), json.headers.get('etag')]).toEqual([
        200,
        'application/json',
        `"${pkg.cid}/evidence.json"`,
      ]);
      const files = await Promise.all(
        body.entries.map(async (e) => ({
          path: e.name,
          bytes: new Uint8Array(await (await fetch(`${base}/ipfs/${pkg.cid}/${e.name}`)).arrayBuffer()),
        })),
      );
      expect(files[1]!.bytes).toEqual(PHOTO);
      expect((await buildUnixfsDirectory(files)).cid).toBe(pkg.cid);

      const r404 = await fetch(`${base}/ipfs/${unknown}`);
      expect(r404.status).toBe(404);
      expect(((await r404.json()) as { error: { code: string } }).error.code).toBe('ROUTE_NOT_FOUND');
      expect((await fetch(`${base}/ipfs/${pkg.cid}/missing.png`)).status).toBe(404);
      const r400 = await fetch(`${base}/ipfs/bafy-not-a-cid`);
      expect(r400.status).toBe(400);
      expect(((await r400.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('S3SignedFetch presigned GET URLs (how /ipfs hands out photos)', () => {
  it('are exactly what @aws-sdk/s3-request-presigner signs for the same object, credentials and time', async () => {
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
    const mine = new URL(
      await new S3SignedFetch({ bucket: 'evidence-bucket', region: 'eu-west-1', credentials }).presignGet(
        'files/bafyroot/photo.jpg',
        300,
        signingDate,
      ),
    );
    const host = 'evidence-bucket.s3.eu-west-1.amazonaws.com';
    const sdk = await new S3RequestPresigner({ credentials, region: 'eu-west-1', sha256: Sha256 as never }).presign(
      { method: 'GET', protocol: 'https:', hostname: host, path: '/files/bafyroot/photo.jpg', query: {}, headers: { host } } as never,
      { expiresIn: 300, signingDate },
    );
    expect(`${mine.origin}${mine.pathname}`).toBe(`https://${host}/files/bafyroot/photo.jpg`);
    expect(Object.fromEntries(mine.searchParams)).toEqual(sdk.query);
  });
});

describe('KuboCarPinner (POST /api/v0/dag/import) against a Kubo-shaped server', () => {
  let server: Server;
  let base: string;
  let answerRoot: ((ours: string) => string) | undefined;
  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = await new Request('http://x', {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type']! },
        body: Buffer.concat(chunks),
      }).formData();
      const file = form.get('file') as Blob;
      const root = (await readVerifiedCar(new Uint8Array(await file.arrayBuffer()))).root;
      expect(req.url).toBe('/api/v0/dag/import?pin-roots=true');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ Root: { Cid: { '/': answerRoot ? answerRoot(root) : root }, PinErrorMsg: '' } })}\n`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('pins when Kubo names our root; fails naming both CIDs when it names another', async () => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
    const car = await exportCar(pkg.cid, pkg.blocks);
    await new KuboCarPinner({ apiUrl: base }).pinCar({ root: pkg.cid, car, name: 'k' });
    const wrong = CID.parse((await buildEvidencePackage({ evidence: { w: 1 } })).cid).toString();
    answerRoot = () => wrong;
    const err = await new KuboCarPinner({ apiUrl: base }).pinCar({ root: pkg.cid, car, name: 'k' }).catch((e: unknown) => e);
    answerRoot = undefined;
    expect(err).toBeInstanceOf(PinRootMismatchError);
    expect((err as Error).message).toContain(pkg.cid);
    expect((err as Error).message).toContain(wrong);
  });
});

describe('pinEvidence (the background pinner)', () => {
  const msg: EvidencePinMessage = { kind: 'STAGE', cid: 'bafy-root', batch_id: 'BATCH-2026-000001', stage: 'GRADED', history_index: 1 };
  function statuses(): EvidencePinStatusStore & { seen: EvidencePinStatus[]; closed: EvidencePinMessage[] } {
    const seen: EvidencePinStatus[] = [];
    const closed: EvidencePinMessage[] = [];
    return {
      seen,
      closed,
      setStagePinStatus: async (_b, i, cid, s) => {
        expect([i, cid]).toEqual([1, 'bafy-root']);
        seen.push(s);
        return true;
      },
      closePinJob: async (m) => void closed.push(m),
      stalePinJobs: async () => [],
      markPinJobRequeued: async () => true,
    };
  }
  const deps = (pinCar: () => Promise<void>, st = statuses()) => ({
    deps: {
      archive: { getCar: async () => new Uint8Array([1]) },
      pinner: { pinCar },
      statuses: st,
      now: () => new Date('2026-11-22T00:00:00Z'),
    },
    st,
  });

  const pinMetrics: string[] = [];
  beforeEach(() => {
    pinMetrics.length = 0;
    setMetricsSink((l) => pinMetrics.push(l));
  });
  afterAll(() => setMetricsSink(undefined));
  /** The `outcome` of each EvidencePins count flushed so far. */
  const outcomes = () => {
    flushMetrics();
    return pinMetrics
      .map((l) => JSON.parse(l) as { EvidencePins?: number; outcome?: string })
      .filter((d) => d.EvidencePins)
      .map((d) => d.outcome);
  };

  it('records PINNED once the service pinned our root', async () => {
    const { deps: d, st } = deps(async () => undefined);
    await pinEvidence(d, msg);
    expect(st.seen).toEqual(['PINNED']);
    expect(st.closed).toEqual([msg]); // the job leaves the reconciliation index
    expect(outcomes()).toEqual(['PINNED']);
  });
  it('a failed attempt records FAILED and throws (the queue redelivers it)', async () => {
    const { deps: d, st } = deps(async () => {
      throw new Error('503 SlowDown');
    });
    await expect(pinEvidence(d, msg)).rejects.toThrow('503 SlowDown');
    expect(st.seen).toEqual(['FAILED']);
    expect(st.closed).toEqual([]); // still open: redelivery, then reconciliation
    expect(outcomes()).toEqual(['FAILED']);
  });
  it('a DDS job (queued before statements became private) is closed without reading or pinning anything', async () => {
    const dds: EvidencePinMessage = { kind: 'DDS', cid: 'bafy-dds', batch_id: 'BATCH-2026-000001', dds_id: 'DDS-2026-000001' };
    const pinCar = jest.fn(async () => undefined);
    const getCar = jest.fn(async () => new Uint8Array([1]));
    const st = statuses();
    await pinEvidence({ archive: { getCar }, pinner: { pinCar }, statuses: st, now: () => new Date('2026-11-22T00:00:00Z') }, dds);
    expect(pinCar).not.toHaveBeenCalled();
    expect(getCar).not.toHaveBeenCalled();
    expect(st.seen).toEqual([]);
    expect(st.closed).toEqual([dds]);
    expect(outcomes()).toEqual(['PRIVATE_SKIPPED']);
  });
  it('a root mismatch records FAILED and is not retried', async () => {
    const { deps: d, st } = deps(async () => {
      throw new PinRootMismatchError('bafy-root', 'bafy-other', 'test');
    });
    await expect(pinEvidence(d, msg)).resolves.toBeUndefined();
    expect(st.seen).toEqual(['FAILED']);
    expect(st.closed).toEqual([msg]); // never retried
    expect(outcomes()).toEqual(['ROOT_MISMATCH']);
  });
});

describe('requeueStalePins (reconciliation of pin jobs lost after their commit)', () => {
  const job = (cid: string, requeues: number) => ({
    message: { kind: 'DDS' as const, cid, batch_id: 'BATCH-2026-000001', dds_id: `DDS-${cid}` },
    requeues,
  });
  function store(jobs: Array<ReturnType<typeof job>>, closedMeanwhile: string[] = []) {
    const marks: Array<{ cid: string; giveUp: boolean }> = [];
    let cutoff = '';
    return {
      marks,
      cutoff: () => cutoff,
      stalePinJobs: async (before: string, limit: number) => {
        cutoff = before;
        expect(limit).toBe(100);
        return jobs;
      },
      markPinJobRequeued: async (m: EvidencePinMessage, _at: string, o: { giveUp?: boolean } = {}) => {
        if (closedMeanwhile.includes(m.cid)) return false;
        marks.push({ cid: m.cid, giveUp: !!o.giveUp });
        return true;
      },
    };
  }
  const now = () => new Date('2026-11-22T12:00:00.000Z');

  it('queues every stale open job again and marks it; a job at the limit is given up, not queued; one closed meanwhile is left alone', async () => {
    const st = store(
      [job('bafy-a', 0), job('bafy-b', MAX_PIN_REQUEUES - 1), job('bafy-c', MAX_PIN_REQUEUES), job('bafy-d', 0)],
      ['bafy-d'],
    );
    const sent: EvidencePinMessage[] = [];
    const queue = fakeWorkQueue<EvidencePinMessage>('evidence-pin-queue', { send: async (m) => void sent.push(m) });
    const report = await requeueStalePins({ statuses: st, pinQueue: queue, now }, 300);
    expect(report).toEqual({ pinsRequeued: 2, pinsGivenUp: 1 });
    expect(st.cutoff()).toBe('2026-11-22T11:55:00.000Z');
    expect(sent.map((m) => m.cid)).toEqual(['bafy-a', 'bafy-b']);
    expect(st.marks).toEqual([
      { cid: 'bafy-a', giveUp: false },
      { cid: 'bafy-b', giveUp: false },
      { cid: 'bafy-c', giveUp: true },
    ]);
  });
});

describe('a stage change keeps its evidence before the commit and queues the pin after it', () => {
  it('the CAR is archived when commitStage runs; the pin job (with the history index) follows; nothing waits for a pin', async () => {
    const evidence = fakeEvidenceKeeping();
    const batch = aBatch({ stage: 'DELIVERED', mint_status: 'CONFIRMED' });
    let archivedAtCommit = false;
    const deps: CustodyDeps = {
      now: () => new Date('2026-11-22T10:00:00Z'),
      batches: fakeBatchStore({ get: async () => ({ ...batch }) }),
      custody: fakeCustodyStore({
        commitStage: async (input) => {
          archivedAtCommit = evidence.cars.has(input.evidenceCid) && evidence.jobs.length === 0;
          return {
            entry: { sequence_number: 2 } as never,
            ledgerTx: { ledger_tx_id: `${input.batchId}-2`, history_index: 1, status: 'PENDING' } as never,
          };
        },
        getLedgerTx: async () => ({ ledger_tx_id: 'x', status: 'CONFIRMED', tx_hash: '0xabc' }) as never,
      }),
      evidence,
      ledgerQueue: fakeWorkQueue('ledger', { send: async () => undefined }),
    };
    const caller = { sub: 'quality', role: 'COOPERATIVE', cooperative_id: batch.cooperative_id, duties: ['QUALITY_OFFICER'] } as never;
    const result = await changeStage(
      deps,
      caller,
      batch.batch_id,
      { cooperative_id: batch.cooperative_id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
      { waitMs: 0 },
    );
    expect(archivedAtCommit).toBe(true);
    expect(evidence.jobs).toEqual([
      { kind: 'STAGE', cid: result.change.evidence_ipfs_cid, batch_id: batch.batch_id, stage: 'GRADED', history_index: 1 },
    ]);
    expect((await readVerifiedCar(evidence.cars.get(result.change.evidence_ipfs_cid)!)).root).toBe(result.change.evidence_ipfs_cid);
    // readIpfsPath serves what was archived
    const listing = await readIpfsPath({ getCar: async (c) => evidence.cars.get(c) ?? null }, result.change.evidence_ipfs_cid);
    expect(listing?.kind).toBe('directory');
  });
});
