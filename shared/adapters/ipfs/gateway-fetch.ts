import { createHash } from 'node:crypto';
import { exporter } from 'ipfs-unixfs-exporter';
import { CID } from 'multiformats/cid';
import type { EvidenceFetcher } from '../../domain/audit-verify';

/** Options of `fetchEvidenceFromGateway`. */
export interface GatewayFetchOptions {
  /** Timeout of each HTTP request, ms (default 15 000). */
  timeoutMs?: number;
  /** The fetch implementation (default: the global `fetch`). */
  fetch?: typeof fetch;
}

const SHA2_256 = 0x12;
const IDENTITY = 0x00;

/**
 * The `fetchEvidence` function of `verifyAuditTrail` over an IPFS HTTP gateway at
 * `gatewayBaseUrl` (its origin, e.g. `http://127.0.0.1:3000` or `https://ipfs.io`; a trailing
 * `/ipfs` is tolerated). For a directory CID it returns `{files: [{path, bytes}]}` (flat names,
 * exact bytes), `null` when the gateway answers 404/410 for the CID.
 * 1. `GET <base>/ipfs/<cid>` with `Accept: application/json`. The local gateway
 *    (infra/local/ipfs-gateway-route.ts) answers a directory with the listing
 *    `{cid, entries: [{name, cid, size}]}`; each file is then read from `GET <base>/ipfs/<cid>/<name>`.
 * 2. Any other answer (an HTML listing, kubo's dag-json view, 400/406) falls back to the trustless
 *    gateway protocol: blocks from `GET <base>/ipfs/<block-cid>?format=raw`
 *    (`Accept: application/vnd.ipld.raw`), each checked against its CID's sha2-256 digest, and
 *    the UnixFS directory walked locally (kubo, ipfs.io, dweb.link, w3s.link… serve this).
 * Limitations: a gateway that offers neither the JSON listing nor raw blocks (HTML-only listings)
 * is not supported; only files directly in the directory are returned (a subdirectory is an
 * error); whole files are held in memory. The caller still re-imports the files to check the CID.
 * Errors (thrown): a malformed CID, a network/timeout failure, a 5xx, a listed file that cannot be
 * read, a block whose bytes do not match its CID, a CID that is not a directory.
 */
export function fetchEvidenceFromGateway(gatewayBaseUrl: string, options: GatewayFetchOptions = {}): EvidenceFetcher {
  const base = gatewayBaseUrl.replace(/\/+$/, '').replace(/\/ipfs$/, '');
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const get = async (path: string, accept: string) => {
    try {
      return await doFetch(`${base}${path}`, { headers: { accept }, signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`GET ${base}${path} failed: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`);
    }
  };

  return async (cidText: string) => {
    const root = CID.parse(cidText);
    const res = await get(`/ipfs/${root.toString()}`, 'application/json');
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel();
      return null;
    }
    if (res.status >= 500) {
      await res.body?.cancel();
      throw new Error(`gateway answered ${res.status} for ${root.toString()}`);
    }
    const listing = res.ok && (res.headers.get('content-type') ?? '').includes('json') ? parseListing(await res.text()) : undefined;
    if (!listing) await res.body?.cancel().catch(() => undefined);
    return listing ? readListed(root, listing, get) : readTrustless(root, get);
  };
}

type Get = (path: string, accept: string) => Promise<Response>;

/** The entries of the local gateway's directory listing, or undefined when the body is not one. */
function parseListing(text: string): Array<{ name: string }> | undefined {
  try {
    const body = JSON.parse(text) as { entries?: unknown };
    if (!Array.isArray(body.entries)) return undefined;
    if (!body.entries.every((e) => typeof e === 'object' && e !== null && typeof (e as { name?: unknown }).name === 'string'))
      return undefined;
    return body.entries as Array<{ name: string }>;
  } catch {
    return undefined;
  }
}

async function readListed(root: CID, entries: Array<{ name: string }>, get: Get) {
  const files: Array<{ path: string; bytes: Uint8Array }> = [];
  for (const { name } of entries) {
    if (!name || name.includes('/') || name === '.' || name === '..')
      throw new Error(`gateway listing of ${root.toString()} has a bad name ${JSON.stringify(name)}`);
    const res = await get(`/ipfs/${root.toString()}/${encodeURIComponent(name)}`, '*/*');
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`gateway answered ${res.status} for ${root.toString()}/${name}, which its listing names`);
    }
    files.push({ path: name, bytes: new Uint8Array(await res.arrayBuffer()) });
  }
  return { files };
}

/** Not-found marker of the trustless block reader. */
class BlockNotFound extends Error {}

async function readTrustless(root: CID, get: Get) {
  const cache = new Map<string, Uint8Array>();
  const fetchBlock = async (cid: CID): Promise<Uint8Array> => {
    const cached = cache.get(cid.toString());
    if (cached) return cached;
    const res = await get(`/ipfs/${cid.toString()}?format=raw`, 'application/vnd.ipld.raw');
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel();
      throw new BlockNotFound(`block ${cid.toString()} not found`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`gateway answered ${res.status} for block ${cid.toString()}`);
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    const { code, digest } = cid.multihash;
    const actual = code === SHA2_256 ? createHash('sha256').update(bytes).digest() : code === IDENTITY ? bytes : undefined;
    if (!actual) throw new Error(`block ${cid.toString()} uses an unsupported hash (multihash code 0x${code.toString(16)})`);
    if (Buffer.compare(Buffer.from(actual), Buffer.from(digest)) !== 0) {
      throw new Error(`the gateway's bytes for block ${cid.toString()} do not match its CID (not a trustless gateway?)`);
    }
    cache.set(cid.toString(), bytes);
    return bytes;
  };
  const store = {
    async *get(cid: CID) {
      yield await fetchBlock(cid);
    },
  };

  try {
    await fetchBlock(root);
  } catch (err) {
    if (err instanceof BlockNotFound) return null;
    throw err;
  }
  const dir = await exporter(root, store);
  if (dir.type !== 'directory') throw new Error(`${root.toString()} is not a directory (${dir.type})`);
  const files: Array<{ path: string; bytes: Uint8Array }> = [];
  for await (const link of dir.entries()) {
    const entry = await exporter(link.cid, store);
    if (entry.type !== 'file' && entry.type !== 'raw' && entry.type !== 'identity') {
      throw new Error(`${root.toString()}/${link.name} is a ${entry.type}; only flat evidence directories are supported`);
    }
    const chunks: Uint8Array[] = [];
    for await (const chunk of entry.content()) chunks.push(chunk);
    files.push({ path: link.name, bytes: new Uint8Array(Buffer.concat(chunks)) });
  }
  return { files };
}
