import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  HttpNationalFarmerRegistry,
  createNationalFarmerRegistryFromEnv,
} from '../../shared/adapters/farmer-registry/national-farmer-registry';
import { NationalRegistryUnavailableError } from '../../shared/domain/errors';
import { startFarmerRegistrySandbox, type FarmerRegistrySandbox } from '../../infra/local/farmer-registry-sandbox';

const KEY = 'maaif-test-key';

/** A loopback server that answers 503 on `/v1/farmers/UG-503…` and never answers anything else. */
async function startFlakyServer(): Promise<{ url: string; requests: () => number; stop: () => Promise<void> }> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    requests++;
    if (req.url?.startsWith('/v1/farmers/UG-503')) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"UNAVAILABLE","message":"down"}}');
    }
    // otherwise: hang
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    stop: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}

describe('HttpNationalFarmerRegistry', () => {
  let sandbox: FarmerRegistrySandbox;
  let flaky: Awaited<ReturnType<typeof startFlakyServer>>;
  const client = (over: Partial<ConstructorParameters<typeof HttpNationalFarmerRegistry>[0]> = {}) =>
    new HttpNationalFarmerRegistry({ baseUrl: sandbox.url, apiKey: async () => KEY, backoffMs: 10, ...over });

  beforeAll(async () => {
    sandbox = await startFarmerRegistrySandbox({ port: 0, apiKey: KEY });
    flaky = await startFlakyServer();
  });
  afterAll(async () => {
    await sandbox.stop();
    await flaky.stop();
  });

  it('finds an active farmer', async () => {
    await expect(client().lookup('UG-MBL-0001')).resolves.toEqual({
      found: true,
      farmer_id: 'UG-MBL-0001',
      full_name: 'Registered farmer UG-MBL-0001',
      district: 'Mbale',
    });
  });

  it('URL-encodes the id', async () => {
    await expect(client().lookup('UG-A/B C')).resolves.toMatchObject({ found: true, farmer_id: 'UG-A/B C' });
  });

  it('404 → not found', async () => {
    await expect(client().lookup('UG-UNKNOWN-1')).resolves.toEqual({ found: false });
  });

  it('DECEASED → not found', async () => {
    await expect(client().lookup('UG-DECEASED-1')).resolves.toEqual({ found: false });
  });

  it('a wrong key throws a plain Error naming 401, at once', async () => {
    const before = sandbox.lookups();
    const err = await client({ apiKey: async () => 'wrong' })
      .lookup('UG-MBL-0001')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(NationalRegistryUnavailableError);
    expect((err as Error).message).toContain('401');
    expect(sandbox.lookups() - before).toBe(1);
  });

  it('UG-OFFLINE: unavailable after exactly `attempts` look-ups, found once the sandbox is back', async () => {
    const c = client({ attempts: 2 });
    const before = sandbox.lookups();
    await expect(c.lookup('UG-OFFLINE-7')).rejects.toBeInstanceOf(NationalRegistryUnavailableError);
    expect(sandbox.lookups() - before).toBe(2);
    // Third look-up is dropped too, the fourth answers: the retry within the same call succeeds.
    await expect(c.lookup('UG-OFFLINE-7')).resolves.toMatchObject({ found: true, farmer_id: 'UG-OFFLINE-7' });
    expect(sandbox.lookups() - before).toBe(4);
  });

  it('a closed port → unavailable', async () => {
    const tmp = createServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', r));
    const port = (tmp.address() as AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    const err = await client({ baseUrl: `http://127.0.0.1:${port}` })
      .lookup('UG-1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NationalRegistryUnavailableError);
    expect((err as Error).message).toMatch(/after 2 attempts \(ECONNREFUSED\)/);
  });

  it('a timeout → unavailable, after `attempts` requests', async () => {
    const before = flaky.requests();
    const started = Date.now();
    const err = await client({ baseUrl: flaky.url, timeoutMs: 150, attempts: 2 })
      .lookup('UG-SLOW')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NationalRegistryUnavailableError);
    expect((err as Error).message).toContain('timeout');
    expect(flaky.requests() - before).toBe(2);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('5xx is retried, then unavailable', async () => {
    const before = flaky.requests();
    const err = await client({ baseUrl: flaky.url, attempts: 3 })
      .lookup('UG-503')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NationalRegistryUnavailableError);
    expect((err as Error).message).toContain('HTTP 503');
    expect(flaky.requests() - before).toBe(3);
  });

  it('createNationalFarmerRegistryFromEnv reads MAAIF_API_URL and MAAIF_API_KEY', async () => {
    const saved = { url: process.env.MAAIF_API_URL, key: process.env.MAAIF_API_KEY };
    try {
      delete process.env.MAAIF_API_URL;
      expect(() => createNationalFarmerRegistryFromEnv()).toThrow(/MAAIF_API_URL/);
      process.env.MAAIF_API_URL = sandbox.url;
      process.env.MAAIF_API_KEY = KEY;
      await expect(createNationalFarmerRegistryFromEnv().lookup('UG-ENV-1')).resolves.toMatchObject({ found: true });
    } finally {
      for (const [k, v] of [
        ['MAAIF_API_URL', saved.url],
        ['MAAIF_API_KEY', saved.key],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
