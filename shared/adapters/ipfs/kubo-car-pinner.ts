import { CID } from 'multiformats/cid';
import { PinRootMismatchError } from '../../domain/evidence-car';
import type { CarPinner } from '../../domain/ports/evidence';

/** Options of {@link KuboCarPinner}. */
export interface KuboCarPinnerOptions {
  /** Base URL of the Kubo RPC API or an IPFS Cluster proxy, e.g. `https://ipfs.example.org:5001` (no `/api/v0`). */
  apiUrl: string;
  /** Sent as the `Authorization` header when set (e.g. `Basic …` or `Bearer …` of a reverse proxy). */
  authorization?: string;
  /** Request timeout, ms (default 30 000). */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/** One line of `dag/import`'s NDJSON answer (Kubo ≥ 0.13). */
interface DagImportLine {
  Root?: { Cid?: { '/': string } | string; PinErrorMsg?: string };
}

/**
 * CarPinner over the Kubo RPC API (or an IPFS Cluster's Kubo proxy): `POST
 * {apiUrl}/api/v0/dag/import?pin-roots=true` with the CAR as the multipart `file`. The answer
 * (NDJSON) names each root it imported and any pin error: the root must be ours (compared as
 * CIDv1), else PinRootMismatchError naming both; a `PinErrorMsg` or a non-2xx answer is an Error.
 */
export class KuboCarPinner implements CarPinner {
  private readonly fetchImpl: typeof fetch;
  constructor(private readonly opts: KuboCarPinnerOptions) {
    this.fetchImpl = opts.fetchImpl ?? fetch;
  }

  async pinCar(input: { root: string; car: Uint8Array; name: string }): Promise<void> {
    const url = `${this.opts.apiUrl.replace(/\/+$/, '')}/api/v0/dag/import?pin-roots=true`;
    const form = new FormData();
    form.append('file', new Blob([input.car], { type: 'application/vnd.ipld.car' }), `${input.name}.car`);
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method: 'POST',
        body: form,
        headers: this.opts.authorization ? { authorization: this.opts.authorization } : {},
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new Error(`Kubo dag/import at ${this.opts.apiUrl} failed: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`Kubo dag/import at ${this.opts.apiUrl} answered ${res.status}: ${text.slice(0, 300)}`);
    const roots: string[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let parsed: DagImportLine;
      try {
        parsed = JSON.parse(line) as DagImportLine;
      } catch {
        throw new Error(`Kubo dag/import at ${this.opts.apiUrl} answered a line that is not JSON: ${line.slice(0, 200)}`);
      }
      if (!parsed.Root) continue;
      const cid = typeof parsed.Root.Cid === 'string' ? parsed.Root.Cid : parsed.Root.Cid?.['/'];
      if (!cid) continue;
      if (parsed.Root.PinErrorMsg)
        throw new Error(`Kubo at ${this.opts.apiUrl} imported ${cid} but could not pin it: ${parsed.Root.PinErrorMsg}`);
      roots.push(cid);
    }
    if (!roots.length) throw new Error(`Kubo dag/import at ${this.opts.apiUrl} named no root.`);
    const ours = CID.parse(input.root).toV1().toString();
    for (const r of roots) {
      let theirs: string;
      try {
        theirs = CID.parse(r).toV1().toString();
      } catch {
        throw new PinRootMismatchError(input.root, r, `Kubo at ${this.opts.apiUrl}`);
      }
      if (theirs !== ours) throw new PinRootMismatchError(input.root, r, `Kubo at ${this.opts.apiUrl}`);
    }
  }
}
