import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isAddress, type Hex } from 'viem';
import { fetchEvidenceFromGateway } from '../../shared/adapters/ipfs/gateway-fetch';
import { auditAnchorReader } from '../../shared/adapters/ledger/anchor-reader';
import { readChainTrail } from '../../shared/adapters/ledger/trail-reader';
import { verifyAuditTrail, type AuditVerification } from '../../shared/domain/audit-verify';
import { parseBatchId, tokenIdForBatch } from '../../shared/domain/ids';
import type { AuditEntry } from '../../shared/domain/records';
import { repoRoot } from '../../shared/runtime/paths';
import { signDevToken } from '../local/dev-keys';
import { readLocalStackFile } from '../local/stack-file';

/**
 * `npm run verify -- <BATCH_ID> [options]`: checks a batch's custody trail independently of the
 * service (docs/api/batches-and-custody.md#custody-trail). It takes the audit entries from the API (`GET /batch/{id}/audit`, only
 * `entries`; the service's own `verified` is ignored) or from `--file`, reads BatchMinted and
 * StageRecorded of the batch's token from the ledger itself, fetches every evidence package from
 * an IPFS gateway itself, checks every periodic anchor the entries claim (their `anchor` fields:
 * head, proof, root) against AuditAnchor on the ledger itself, and runs `verifyAuditTrail`. Prints
 * one line per check (an entry not yet anchored, or whose anchor disagrees, is named) and a summary.
 * Exit code: 0 everything matches, 1 a check failed or a source could not be read, 2 usage error.
 */

const USAGE = `usage: npm run verify -- <BATCH_ID> [options]
  --api URL             service base URL (default: http://127.0.0.1:$PORT if PORT is set,
                        else the url in $LOCAL_DATA_DIR/stack.json, else http://127.0.0.1:3000)
  --token JWT           Bearer token (default: an ADMIN token signed with the local dev issuer key
                        in $LOCAL_DATA_DIR, when it exists)
  --file entries.json   read the audit entries from a file (an array, or {entries: [...]}) instead
  --rpc URL --chain-id N --batch-token ADDR --trace-log ADDR --audit-anchor ADDR
                        the ledger (default: $LOCAL_DATA_DIR/stack.json endpoints; chain id 31337)
  --token-id N          the BatchToken id (default: entry 1's payload.token_id, else derived from
                        the batch id)
  --from-block N        first block to search for events (default 0)
  --ipfs-gateway URL    IPFS gateway for the evidence (default: the API URL)
  --json                print the verification as JSON instead of lines
LOCAL_DATA_DIR defaults to .local in the repository.`;

class UsageError extends Error {}

/** Writes lines somewhere (stdout/stderr in the CLI). */
type Out = (line: string) => void;

/**
 * Runs the command with `argv` (the arguments after the script name). Returns the exit code:
 * 0 verified, 1 not verified or a source failed, 2 usage error. Never throws.
 */
export async function runVerify(argv: string[], out: Out, err: Out): Promise<number> {
  try {
    return await run(argv, out);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`verify: ${e.message}`);
      err(USAGE);
      return 2;
    }
    err(`verify: ${(e as Error).message}`);
    return 1;
  }
}

async function run(argv: string[], out: Out): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        api: { type: 'string' },
        token: { type: 'string' },
        file: { type: 'string' },
        rpc: { type: 'string' },
        'chain-id': { type: 'string' },
        'batch-token': { type: 'string' },
        'trace-log': { type: 'string' },
        'audit-anchor': { type: 'string' },
        'token-id': { type: 'string' },
        'from-block': { type: 'string' },
        'ipfs-gateway': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out(USAGE);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'give one batch id' : `give one batch id, got ${positionals.join(' ')}`);
  const batchId = positionals[0]!;
  const batchNo = parseBatchId(batchId);
  if (!batchNo) throw new UsageError(`${JSON.stringify(batchId)} is not a batch id (BATCH-yyyy-nnnnnn)`);

  const dataDir = localDataDir();
  const stack = dataDir ? readLocalStackFile(dataDir) : undefined;

  // ---- ledger settings (checked before anything is fetched: they are usage errors)
  const rpcUrl = values.rpc ?? stack?.endpoints?.ledger;
  const batchToken = values['batch-token'] ?? stack?.endpoints?.batch_token;
  const traceLog = values['trace-log'] ?? stack?.endpoints?.trace_log;
  const auditAnchor = values['audit-anchor'] ?? stack?.endpoints?.audit_anchor;
  const chainIdText =
    values['chain-id'] ?? stringOf(stack?.chain_id ?? stack?.endpoints?.chain_id) ?? (stack?.endpoints?.ledger ? '31337' : undefined);
  const missing = [
    !rpcUrl && '--rpc',
    !chainIdText && '--chain-id',
    !batchToken && '--batch-token',
    !traceLog && '--trace-log',
    !auditAnchor && '--audit-anchor',
  ].filter(Boolean);
  if (missing.length > 0)
    throw new UsageError(`missing ${missing.join(', ')} (no ${dataDir ? join(dataDir, 'stack.json') : 'stack.json'} to take them from)`);
  if (!/^\d+$/.test(chainIdText!) || Number(chainIdText) <= 0) throw new UsageError('--chain-id must be a positive integer');
  for (const [flag, v] of [
    ['--batch-token', batchToken],
    ['--trace-log', traceLog],
    ['--audit-anchor', auditAnchor],
  ] as const) {
    if (!isAddress(v!, { strict: false })) throw new UsageError(`${flag} ${v} is not an address`);
  }
  if (values['token-id'] !== undefined && !/^\d+$/.test(values['token-id'])) throw new UsageError('--token-id must be a decimal integer');
  if (values['from-block'] !== undefined && !/^\d+$/.test(values['from-block']))
    throw new UsageError('--from-block must be a block number');
  const apiUrl = (
    values.api ?? (process.env.PORT ? `http://127.0.0.1:${process.env.PORT}` : (stack?.url ?? 'http://127.0.0.1:3000'))
  ).replace(/\/+$/, '');
  const gatewayUrl = values['ipfs-gateway'] ?? apiUrl;

  // ---- audit entries
  let entries: AuditEntry[];
  let entriesSource: string;
  if (values.file) {
    entries = readEntriesFile(values.file);
    entriesSource = values.file;
  } else {
    const token = values.token ?? (dataDir ? await devAdminToken(dataDir) : undefined);
    entries = await fetchEntries(apiUrl, batchId, token);
    entriesSource = `${apiUrl}/batch/${batchId}/audit`;
  }

  // ---- ledger events
  const payloadToken = (entries[0] as Partial<AuditEntry> | undefined)?.payload?.token_id;
  const tokenId =
    values['token-id'] !== undefined
      ? BigInt(values['token-id'])
      : typeof payloadToken === 'string' && /^\d+$/.test(payloadToken)
        ? BigInt(payloadToken)
        : tokenIdForBatch(batchNo.year, batchNo.n);
  let chain;
  try {
    chain = await readChainTrail({
      rpcUrl: rpcUrl!,
      chainId: Number(chainIdText),
      batchTokenAddress: batchToken as Hex,
      traceLogAddress: traceLog as Hex,
      tokenId,
      fromBlock: values['from-block'] !== undefined ? BigInt(values['from-block']) : undefined,
    });
  } catch (e) {
    throw new Error(`cannot read the ledger at ${rpcUrl}: ${shortMessage(e)}`);
  }

  // The periodic anchors the entries claim (each entry names the one covering it), checked on chain here.
  const claimed = entries.map((e) => (e as { anchor?: unknown }).anchor).filter((a) => typeof a === 'object' && a !== null && 'root' in a);
  const rootBlock = auditAnchorReader({ rpcUrl: rpcUrl!, chainId: Number(chainIdText), address: auditAnchor as Hex });
  const result = await verifyAuditTrail({
    batchId,
    entries,
    chain,
    fetchEvidence: fetchEvidenceFromGateway(gatewayUrl),
    anchoring: { claimed, rootBlock },
  });

  if (values.json) {
    out(JSON.stringify({ batch_id: batchId, token_id: tokenId.toString(), ...result }, null, 2));
  } else {
    out(`Batch ${batchId}, token ${tokenId}`);
    out(`  audit entries  ${entries.length} from ${entriesSource}`);
    out(`  ledger         ${rpcUrl} (chain ${chainIdText}): ${chain.mints.length} BatchMinted, ${chain.stages.length} StageRecorded`);
    out(`  evidence       ${gatewayUrl}/ipfs/`);
    const anchoredCount = result.anchors.filter((a) => a !== null).length;
    out(`  anchors        ${anchoredCount} of ${entries.length} entries anchored (AuditAnchor ${auditAnchor})`);
    printChecks(result, out);
  }
  return result.verified ? 0 : 1;
}

function printChecks(result: AuditVerification, out: Out): void {
  const idWidth = Math.max(0, ...result.checks.map((c) => c.message_id.length));
  for (const c of result.checks) {
    out(`${c.ok ? '✓' : '✗'} ${c.message_id.padEnd(idWidth)}  ${c.check.padEnd(16)}  ${c.detail}`);
  }
  const failed = result.checks.filter((c) => !c.ok).length;
  if (result.verified) {
    out(`VERIFIED: all ${result.checks.length} checks passed, every entry anchored`);
  } else {
    const f = result.first_failure;
    out(`NOT VERIFIED: ${failed} of ${result.checks.length} checks failed${f ? `; first: ${f.message_id} ${f.check}: ${f.detail}` : ''}`);
    const unanchored = result.checks.filter((c) => c.check === 'anchor' && !c.ok);
    if (unanchored.length > 0) out(`  not anchored or disagreeing: ${unanchored.map((c) => c.message_id).join(', ')}`);
  }
}

/** LOCAL_DATA_DIR, default `<repo>/.local`; undefined outside the checkout without the variable. */
function localDataDir(): string | undefined {
  if (process.env.LOCAL_DATA_DIR) return resolve(process.env.LOCAL_DATA_DIR);
  try {
    return join(repoRoot(), '.local');
  } catch {
    return undefined;
  }
}

function stringOf(v: number | string | undefined): string | undefined {
  return v === undefined ? undefined : String(v);
}

/** An ADMIN token from the local dev issuer key, when `dataDir` has one (never creates a key). */
async function devAdminToken(dataDir: string): Promise<string | undefined> {
  if (!existsSync(join(dataDir, 'dev-issuer-key.json'))) return undefined;
  return signDevToken({ role: 'ADMIN', sub: 'verify-cli' }, 600, dataDir);
}

function readEntriesFile(file: string): AuditEntry[] {
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
  const entries = Array.isArray(body) ? body : (body as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(entries)) throw new Error(`${file} holds neither an array of audit entries nor {entries: [...]}`);
  return entries as AuditEntry[];
}

async function fetchEntries(apiUrl: string, batchId: string, token: string | undefined): Promise<AuditEntry[]> {
  const url = `${apiUrl}/batch/${encodeURIComponent(batchId)}/audit`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    throw new Error(`cannot reach ${url}: ${shortMessage(e)} (is the service running? npm start)`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    const hint = res.status === 401 && !token ? ' (no token: pass --token, or run against a local stack with its LOCAL_DATA_DIR)' : '';
    throw new Error(`GET ${url} answered ${res.status}${error ? ` ${error.code}: ${error.message}` : ''}${hint}`);
  }
  const entries = (body as { entries?: unknown } | undefined)?.entries;
  if (!Array.isArray(entries)) throw new Error(`GET ${url} did not return {entries: [...]}`);
  return entries as AuditEntry[];
}

function shortMessage(e: unknown): string {
  const err = e as { shortMessage?: string; message?: string; cause?: { message?: string } };
  const msg = err.shortMessage ?? err.message ?? String(e);
  return err.cause?.message && !msg.includes(err.cause.message) ? `${msg} (${err.cause.message})` : msg;
}

if (process.argv[1]?.endsWith('verify-cli.ts')) {
  runVerify(
    process.argv.slice(2),
    (l) => process.stdout.write(`${l}\n`),
    (l) => process.stderr.write(`${l}\n`),
  ).then((code) => {
    process.exitCode = code;
  });
}
