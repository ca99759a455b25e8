import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { AttemptResult, EndpointUrlGuard, OutboundSender } from '../../domain/outbound-webhooks';

/**
 * The outbound webhook sender and its SSRF guard.
 *
 * In AWS only `https` URLs whose host resolves to public addresses are accepted: the URL is
 * checked at registration (every address the name resolves to) and again at each delivery, where
 * the connection's own DNS lookup refuses a non-public address, so a name re-pointed to an
 * internal address after registration (DNS rebinding) is never connected to. Refused ranges: the
 * IANA special-purpose blocks (this network, private, carrier-grade NAT, loopback, link-local
 * with the instance metadata address 169.254.169.254, documentation, benchmarking, multicast,
 * reserved; IPv6 loopback, unique-local, link-local, multicast, and IPv4-mapped forms of the IPv4 ones).
 *
 * Locally (`allowLoopback`, set by the local stack only) `http` and `https` URLs on loopback
 * addresses are accepted too, so tests receive on 127.0.0.1.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address (`::ffff:10.0.0.1`), else the address. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1]!, family: 'ipv4' };
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 'ipv4' };
  }
  return { address, family: isIP(address) === 4 ? 'ipv4' : 'ipv6' };
}

/** True when `address` (an IP literal) is public: outside every refused range. */
export function isPublicAddress(address: string): boolean {
  if (!isIP(address)) return false;
  const a = unmapped(address);
  return !BLOCKED.check(a.address, a.family);
}

/** True when `address` is a loopback address (127/8, ::1, or their mapped forms). */
function isLoopbackAddress(address: string): boolean {
  if (!isIP(address)) return false;
  const a = unmapped(address);
  return LOOPBACK.check(a.address, a.family);
}

/** Why an address may not be connected to, or null. */
function addressRefusal(address: string, allowLoopback: boolean): string | null {
  if (isPublicAddress(address)) return null;
  if (allowLoopback && isLoopbackAddress(address)) return null;
  return `resolves to ${address}, which is not a public address`;
}

/** Every address `host` resolves to (an IP literal is itself). */
async function resolveAll(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return [bare];
  return new Promise((resolve, reject) =>
    dnsLookup(bare, { all: true }, (err, addresses: LookupAddress[]) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))),
  );
}

/**
 * Why `url` is refused as a webhook endpoint, or null: not an absolute http(s) URL, credentials in
 * it, not https (unless `allowLoopback`), a host that does not resolve, or any resolved address
 * not public (loopback allowed with `allowLoopback`).
 */
export async function webhookUrlRefusal(url: string, allowLoopback: boolean): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol !== 'https:' && !(allowLoopback && u.protocol === 'http:')) return 'must be an https URL';
  if (u.username || u.password) return 'must not carry credentials';
  let addresses: string[];
  try {
    addresses = await resolveAll(u.hostname);
  } catch {
    return `host ${u.hostname} does not resolve`;
  }
  if (!addresses.length) return `host ${u.hostname} does not resolve`;
  for (const a of addresses) {
    const why = addressRefusal(a, allowLoopback);
    if (why) return `host ${u.hostname} ${why}`;
  }
  if (allowLoopback && u.protocol === 'http:' && !addresses.every(isLoopbackAddress))
    return 'must be an https URL (http only on loopback, locally)';
  return null;
}

/** The registration-time guard. */
export class UrlGuard implements EndpointUrlGuard {
  constructor(private readonly allowLoopback: boolean) {}

  refusal(url: string): Promise<string | null> {
    return webhookUrlRefusal(url, this.allowLoopback);
  }
}

/** Per-attempt timeout (Standard Webhooks recommends a short one; a slow receiver is retried). */
const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * POSTs one Standard Webhooks message: `webhook-id` (the event id), `webhook-timestamp` (now,
 * seconds) and `webhook-signature` (`v1,<base64>` per signing secret, space-separated during a
 * rotation's overlap), signed with the `standardwebhooks` library. The URL is checked again and
 * the connection's DNS lookup refuses non-public addresses. Never throws: a refused URL, a
 * transport error or a timeout is an `error`; any HTTP answer a `status_code`.
 */
export class HttpOutboundSender implements OutboundSender {
  constructor(
    private readonly allowLoopback: boolean,
    private readonly timeoutMs = ATTEMPT_TIMEOUT_MS,
  ) {}

  async send(input: { url: string; secrets: string[]; eventId: string; body: string; at: Date }): Promise<AttemptResult> {
    const refusal = await webhookUrlRefusal(input.url, this.allowLoopback);
    if (refusal) return { error: `url refused: ${refusal}` };
    const signature = input.secrets.map((s) => new Webhook(s).sign(input.eventId, input.at, input.body)).join(' ');
    const u = new URL(input.url);
    const allowLoopback = this.allowLoopback;
    const lookup: LookupFunction = (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, '', 4);
        const bad = addresses.find((a) => addressRefusal(a.address, allowLoopback));
        if (bad || !addresses.length)
          return callback(Object.assign(new Error(`refused address ${bad?.address ?? 'none'}`), { code: 'EADDRREFUSED' }), '', 4);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
    const options: RequestOptions = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(input.body)),
        'user-agent': 'coffee-trace-webhooks/1',
        'webhook-id': input.eventId,
        'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
        'webhook-signature': signature,
      },
      lookup,
      timeout: this.timeoutMs,
    };
    const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<AttemptResult>((resolve) => {
      const req = request(u, options, (res) => {
        res.resume(); // the body is not needed
        res.on('end', () => resolve({ status_code: res.statusCode ?? 0 }));
        res.on('error', () => resolve({ status_code: res.statusCode ?? 0 }));
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
      req.on('error', (err: NodeJS.ErrnoException) =>
        resolve({ error: err.code === 'EADDRREFUSED' ? err.message : (err.code ?? err.message) }),
      );
      req.end(input.body);
    });
  }
}
