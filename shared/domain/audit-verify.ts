import { CID } from 'multiformats/cid';
import { buildUnixfsDirectory, canonicalEvidenceBytes, EVIDENCE_FILE } from './evidence-package';
import { STAGE_CODES } from './custody';
import { auditHash, GENESIS_HASH } from './audit';
import { auditMessageId } from './ids';
import { entryAnchorOf, verifyAnchorProof, type BatchAnchor, type EntryAnchor } from './anchoring';
import type { Hex } from 'viem';
import type { AnchorRootReader, ChainMint, ChainStage, ChainTrail, EvidenceFetcher } from './ports/audit';
import type { AuditEntry } from './records';

/**
 * Independent verification of a batch's custody trail (docs/api/batches-and-custody.md#custody-trail): the audit log's hash chain,
 * the ledger events that commit to its entries, and the evidence packages on IPFS, each checked
 * against the others. Pure except for the optional `fetchEvidence`.
 */

/** The kinds of check `verifyAuditTrail` reports. */
type AuditCheckName = 'hash_chain' | 'mint_event' | 'trace_log_event' | 'evidence_cid' | 'evidence_content' | 'anchor';

/**
 * One check. `sequence_number`/`message_id` name the audit entry it concerns; a ledger event that
 * belongs to no entry is reported with `sequence_number` 0 and `message_id` "-".
 */
export interface AuditCheck {
  sequence_number: number;
  message_id: string;
  check: AuditCheckName;
  ok: boolean;
  detail: string;
}

/**
 * The outcome: `verified` is true only when there is at least one check and every check passed
 * (so only when every entry is anchored).
 */
export interface AuditVerification {
  verified: boolean;
  checks: AuditCheck[];
  /** Each entry's anchor on the ledger (aligned with the entries), null while not anchored or when its anchor does not check. */
  anchors: Array<EntryAnchor | null>;
  /** The first failed check in `checks` order (entries in order, then unmatched ledger events). */
  first_failure?: Omit<AuditCheck, 'ok'>;
}

export type { ChainMint, ChainStage, ChainTrail, EvidenceFetcher };

/**
 * The periodic anchors claimed for a batch (from the service's store, or the `anchor` fields of
 * the entries an API answered — untrusted either way) and where to check their roots on chain.
 */
export interface AnchorClaims {
  claimed: unknown[];
  rootBlock: AnchorRootReader;
}

/** How the `anchor` check of an entry no periodic anchor covers yet begins (the only failure time cures). */
export const NOT_YET_ANCHORED = 'not yet anchored';

const STAGE_CHANGED = 'STAGE_CHANGED';
const BATCH_SUBMITTED = 'BATCH_SUBMITTED';
const HASH_HEX = /^[0-9a-f]{64}$/;
const STAGE_NAMES = new Map<number, string>(Object.entries(STAGE_CODES).map(([name, code]) => [code, name]));

/**
 * Verifies the audit entries of `batchId` (in the order given) against the ledger events of its
 * token and, when `fetchEvidence` is given, against the evidence on IPFS:
 * - `hash_chain` (every entry): sequence numbers 1..n in order, batch id, message id
 *   `AUD-<batch>-<n>`, prev_hash = the previous entry's hash (64 zeros for the first), and the hash
 *   recomputed from the entry's content;
 * - `mint_event` (entry 1, which must be BATCH_SUBMITTED with `payload.token_id`): exactly one
 *   BatchMinted for the token/batch, with the same token id, batch id and audit hash `0x<hash>`;
 * - `trace_log_event` (every STAGE_CHANGED): exactly one StageRecorded with the entry's audit hash,
 *   and it has the entry's token id, stage code and evidence CID. A StageRecorded of the token that
 *   no STAGE_CHANGED entry claims is a failure too (on the entry whose hash it carries, else on
 *   `sequence_number` 0);
 * - `evidence_cid` / `evidence_content` (every STAGE_CHANGED, with `fetchEvidence`): the fetched
 *   directory re-imports to `payload.evidence_ipfs_cid`, and its evidence.json equals the RFC 8785
 *   canonical JSON of `payload.evidence`. Without `fetchEvidence` only the CID's form is checked
 *   (the detail says the content was not fetched).
 * - `anchor` (every entry, docs/api/anchoring.md#anchoring-of-the-audit-log): entry 1 is anchored by its BatchMinted and every
 *   STAGE_CHANGED by its StageRecorded (when those checks passed); every other entry by a periodic
 *   anchor whose head (`head_sequence_number` >= the entry's) is the log's own entry at that
 *   number (same hash: a log rewritten after its anchor fails here), whose proof leads from that
 *   head to `root`, and whose root AuditAnchor committed at `block_number`. No such anchor: "not
 *   yet anchored". `anchors` gives each entry's anchor.
 * Never throws for bad data: malformed entries, events, claims or fetch failures become failed checks.
 */
export async function verifyAuditTrail(input: {
  batchId: string;
  entries: AuditEntry[];
  chain: ChainTrail;
  fetchEvidence?: EvidenceFetcher;
  anchoring: AnchorClaims;
}): Promise<AuditVerification> {
  const { batchId, entries, chain, fetchEvidence } = input;
  const ownAnchors: Array<EntryAnchor | null> = entries.map(() => null);
  const perEntry: AuditCheck[][] = entries.map(() => []);
  const trailing: AuditCheck[] = [];

  if (entries.length === 0) {
    trailing.push({ sequence_number: 0, message_id: '-', check: 'hash_chain', ok: false, detail: `no audit entries for ${batchId}` });
  }

  // ---- hash chain
  let prev = GENESIS_HASH;
  entries.forEach((e, i) => {
    const shape = shapeProblem(e);
    const add = (ok: boolean, detail: string) => perEntry[i]!.push({ ...entryRef(e, i), check: 'hash_chain', ok, detail });
    if (shape) {
      add(false, shape);
      prev = isRecord(e) && typeof e.hash === 'string' ? e.hash : '';
      return;
    }
    const problems: string[] = [];
    if (e.sequence_number !== i + 1) problems.push(`sequence_number ${e.sequence_number} at position ${i + 1} (expected ${i + 1})`);
    if (e.batch_id !== batchId) problems.push(`batch_id ${JSON.stringify(e.batch_id)} is not ${batchId}`);
    if (e.message_id !== auditMessageId(batchId, e.sequence_number)) {
      problems.push(`message_id ${JSON.stringify(e.message_id)} is not ${auditMessageId(batchId, e.sequence_number)}`);
    }
    if (e.prev_hash !== prev) {
      problems.push(
        i === 0
          ? `prev_hash ${short(e.prev_hash)} is not the genesis hash (64 zeros)`
          : `prev_hash ${short(e.prev_hash)} does not link to the previous entry's hash ${short(prev)}`,
      );
    }
    let recomputed: string | undefined;
    try {
      recomputed = auditHash(e);
    } catch (err) {
      problems.push(`content cannot be canonicalised: ${(err as Error).message}`);
    }
    if (recomputed !== undefined && recomputed !== e.hash) {
      problems.push(`recomputed hash ${short(recomputed)} does not equal the stored hash ${short(e.hash)} (content altered)`);
    }
    add(
      problems.length === 0,
      problems.length === 0 ? `hash ${short(e.hash)} recomputes and links to ${i === 0 ? 'genesis' : `entry ${i}`}` : problems.join('; '),
    );
    prev = e.hash;
  });

  // ---- token id of the batch: entry 1's payload.token_id, else the only mint naming the batch
  const first = entries[0];
  const payloadToken = isRecord(first) && isRecord(first.payload) ? parseTokenId(first.payload.token_id) : undefined;
  const mintsOfBatch = chain.mints.filter((m) => m.batchId === batchId);
  const tokenId = payloadToken ?? (mintsOfBatch.length === 1 ? mintsOfBatch[0]!.tokenId : undefined);

  // ---- mint event (entry 1)
  entries.forEach((e, i) => {
    if (!isRecord(e) || shapeProblem(e)) return;
    const isFirst = i === 0;
    if (!isFirst && e.type !== BATCH_SUBMITTED) return;
    const add = (ok: boolean, detail: string) => perEntry[i]!.push({ ...entryRef(e, i), check: 'mint_event', ok, detail });
    if (!isFirst) {
      add(false, 'BATCH_SUBMITTED must be the first entry of the trail');
      return;
    }
    if (e.type !== BATCH_SUBMITTED) {
      add(false, `entry 1 has type ${e.type}, expected ${BATCH_SUBMITTED}`);
      return;
    }
    if (payloadToken === undefined) {
      add(false, 'payload.token_id is missing or not a decimal string');
      return;
    }
    const expected = `0x${e.hash}`.toLowerCase();
    const relevant = chain.mints.filter((m) => m.tokenId === payloadToken || m.batchId === batchId);
    if (relevant.length === 0) {
      add(false, `no BatchMinted event for token ${payloadToken} or batch ${batchId}`);
      return;
    }
    if (relevant.length > 1) {
      add(
        false,
        `${relevant.length} BatchMinted events for token ${payloadToken} / batch ${batchId} (txs ${relevant.map((m) => m.txHash).join(', ')}), expected exactly one`,
      );
      return;
    }
    const m = relevant[0]!;
    const problems: string[] = [];
    if (m.tokenId !== payloadToken) problems.push(`token id ${m.tokenId}, entry has ${payloadToken}`);
    if (m.batchId !== batchId) problems.push(`batch id ${JSON.stringify(m.batchId)}, expected ${batchId}`);
    if (m.auditHash.toLowerCase() !== expected) problems.push(`audit hash ${short(m.auditHash)}, entry hash is ${short(expected)}`);
    if (problems.length === 0 && m.blockNumber !== undefined) ownAnchors[i] = { tx_hash: m.txHash, block_number: Number(m.blockNumber) };
    add(
      problems.length === 0,
      problems.length === 0
        ? `BatchMinted(token ${m.tokenId}, ${m.batchId}, ${short(m.auditHash)}) in tx ${m.txHash}`
        : `BatchMinted in tx ${m.txHash} has ${problems.join('; ')}`,
    );
  });

  // ---- trace-log events (every STAGE_CHANGED)
  const claimed = new Set<ChainStage>();
  entries.forEach((e, i) => {
    if (!isRecord(e) || shapeProblem(e) || e.type !== STAGE_CHANGED) return;
    const add = (ok: boolean, detail: string) => perEntry[i]!.push({ ...entryRef(e, i), check: 'trace_log_event', ok, detail });
    const expected = `0x${e.hash}`.toLowerCase();
    const carrying = chain.stages.filter((s) => s.auditHash.toLowerCase() === expected);
    for (const s of carrying) claimed.add(s);

    const stage = e.payload.stage;
    const code =
      typeof stage === 'string' && Object.hasOwn(STAGE_CODES, stage) ? STAGE_CODES[stage as keyof typeof STAGE_CODES] : undefined;
    const cid = e.payload.evidence_ipfs_cid;
    const entryToken = parseTokenId(e.payload.token_id) ?? tokenId;
    const problems: string[] = [];
    if (code === undefined) problems.push(`payload.stage ${JSON.stringify(stage)} is not a ledger stage`);
    if (typeof cid !== 'string' || cid.length === 0) problems.push('payload.evidence_ipfs_cid is missing');
    if (entryToken === undefined) problems.push('the token id is unknown (no payload.token_id)');
    else if (tokenId !== undefined && entryToken !== tokenId)
      problems.push(`payload.token_id ${entryToken} is not the batch's token ${tokenId}`);
    if (problems.length > 0) {
      add(false, problems.join('; '));
      return;
    }

    if (carrying.length === 0) {
      const sameStage = chain.stages.filter((s) => s.tokenId === entryToken && s.stage === code);
      const hint =
        sameStage.length > 0
          ? ` (${sameStage.length} StageRecorded for ${String(stage)} carry other hashes: ${sameStage.map((s) => `${short(s.auditHash)} in tx ${s.txHash}`).join(', ')})`
          : '';
      add(false, `no StageRecorded event carries audit hash ${short(expected)}${hint}`);
      return;
    }
    if (carrying.length > 1) {
      add(
        false,
        `${carrying.length} StageRecorded events carry audit hash ${short(expected)} (${carrying.map(eventRef).join(', ')}), expected exactly one`,
      );
      return;
    }
    const s = carrying[0]!;
    if (s.tokenId !== entryToken) problems.push(`token id ${s.tokenId}, entry has ${entryToken}`);
    if (s.stage !== code) problems.push(`stage ${stageLabel(s.stage)}, entry has ${stageLabel(code!)}`);
    if (s.evidenceCid !== cid) problems.push(`evidence CID ${s.evidenceCid}, entry has ${String(cid)}`);
    if (problems.length === 0 && s.blockNumber !== undefined) ownAnchors[i] = { tx_hash: s.txHash, block_number: Number(s.blockNumber) };
    add(
      problems.length === 0,
      problems.length === 0
        ? `StageRecorded(token ${s.tokenId}, ${stageLabel(s.stage)}, ${s.evidenceCid}) at ${eventRef(s)}`
        : `StageRecorded at ${eventRef(s)} has ${problems.join('; ')}`,
    );
  });

  // ---- StageRecorded events of the token that no STAGE_CHANGED entry claims
  const byHash = new Map<string, number>();
  entries.forEach((e, i) => {
    if (isRecord(e) && typeof e.hash === 'string') byHash.set(`0x${e.hash}`.toLowerCase(), i);
  });
  for (const s of chain.stages) {
    if (claimed.has(s) || (tokenId !== undefined && s.tokenId !== tokenId)) continue;
    const desc = `StageRecorded(token ${s.tokenId}, ${stageLabel(s.stage)}, ${s.evidenceCid}, ${short(s.auditHash)}) at ${eventRef(s)}`;
    const i = byHash.get(s.auditHash.toLowerCase());
    if (i !== undefined) {
      const e = entries[i]!;
      perEntry[i]!.push({
        ...entryRef(e, i),
        check: 'trace_log_event',
        ok: false,
        detail: `${desc} carries the hash of this ${String(e.type)} entry, which is not a stage change`,
      });
    } else {
      trailing.push({
        sequence_number: 0,
        message_id: '-',
        check: 'trace_log_event',
        ok: false,
        detail: `${desc} matches no audit entry (extra on-chain stage)`,
      });
    }
  }

  // ---- evidence on IPFS (every STAGE_CHANGED)
  for (const [i, e] of entries.entries()) {
    if (!isRecord(e) || shapeProblem(e) || e.type !== STAGE_CHANGED) continue;
    perEntry[i]!.push(...(await evidenceChecks(e, i, fetchEvidence)));
  }

  // ---- anchors (docs/api/anchoring.md#anchoring-of-the-audit-log): after the ledger checks, whose outcome the own anchors carry
  const anchors = await anchorChecks(batchId, entries, ownAnchors, input.anchoring, perEntry);

  const checks = [...perEntry.flat(), ...trailing];
  const failed = checks.find((c) => !c.ok);
  return {
    verified: checks.length > 0 && failed === undefined,
    checks,
    anchors,
    ...(failed
      ? {
          first_failure: {
            sequence_number: failed.sequence_number,
            message_id: failed.message_id,
            check: failed.check,
            detail: failed.detail,
          },
        }
      : {}),
  };
}

async function anchorChecks(
  batchId: string,
  entries: AuditEntry[],
  ownAnchors: Array<EntryAnchor | null>,
  anchoring: AnchorClaims,
  perEntry: AuditCheck[][],
): Promise<Array<EntryAnchor | null>> {
  const anchors: Array<EntryAnchor | null> = entries.map(() => null);
  // Each distinct claim checked once (many entries share one anchor), in head order.
  const claims = new Map<string, { claim: BatchAnchor | null; raw: unknown }>();
  for (const raw of anchoring.claimed) {
    const claim = batchAnchorOf(raw);
    claims.set(claim ? `${claim.root}#${claim.head_sequence_number}` : (JSON.stringify(raw) ?? 'undefined'), { claim, raw });
  }
  const rootBlocks = new Map<string, Promise<bigint | null>>();
  const checked = await Promise.all(
    [...claims.values()].map(async ({ claim, raw }) => {
      if (!claim) return { claim, head: Number.NaN, problem: `a claimed anchor is malformed: ${JSON.stringify(raw)?.slice(0, 200)}` };
      return {
        claim,
        head: claim.head_sequence_number,
        problem: await periodicAnchorProblem(batchId, claim, entries, anchoring.rootBlock, rootBlocks),
      };
    }),
  );
  checked.sort((a, b) => a.head - b.head);
  entries.forEach((e, i) => {
    if (!isRecord(e) || shapeProblem(e)) return;
    const add = (ok: boolean, detail: string) => perEntry[i]!.push({ ...entryRef(e, i), check: 'anchor', ok, detail });
    const own = i === 0 && e.type === BATCH_SUBMITTED ? 'its BatchMinted' : e.type === STAGE_CHANGED ? 'its StageRecorded' : undefined;
    if (own) {
      anchors[i] = ownAnchors[i] ?? null;
      const a = ownAnchors[i];
      add(
        a !== null && a !== undefined,
        a
          ? `anchored by ${own} in tx ${a.tx_hash} (block ${a.block_number})`
          : `not anchored: ${own} does not match (see ${i === 0 ? 'mint_event' : 'trace_log_event'})`,
      );
      return;
    }
    const covering = checked.filter((c) => c.head >= e.sequence_number);
    const good = covering.find((c) => c.problem === undefined);
    if (good?.claim) {
      anchors[i] = entryAnchorOf(good.claim);
      const via =
        good.claim.head_sequence_number === e.sequence_number
          ? 'as the head'
          : `through the hash chain to head #${good.claim.head_sequence_number}`;
      add(
        true,
        `anchored by the periodic anchor ${short(good.claim.root)} in tx ${good.claim.tx_hash} (block ${good.claim.block_number}), ${via}`,
      );
      return;
    }
    if (covering.length > 0) {
      add(false, `anchor disagrees: ${covering[0]!.problem}`);
      return;
    }
    const malformed = checked.find((c) => !c.claim);
    add(
      false,
      malformed
        ? `not anchored: ${malformed.problem}`
        : `${NOT_YET_ANCHORED}: no periodic anchor covers entry #${e.sequence_number} (written ${e.at}) yet; the next anchor will`,
    );
  });
  return anchors;
}

/** Why a claimed periodic anchor does not anchor the log's head it names, or undefined when it does. */
async function periodicAnchorProblem(
  batchId: string,
  a: BatchAnchor,
  entries: AuditEntry[],
  rootBlock: AnchorRootReader,
  rootBlocks: Map<string, Promise<bigint | null>>,
): Promise<string | undefined> {
  const where = `periodic anchor ${short(a.root)} (tx ${a.tx_hash}, block ${a.block_number})`;
  const head = entries.find((e) => isRecord(e) && e.sequence_number === a.head_sequence_number);
  if (!head) return `${where} names head #${a.head_sequence_number}, which is not in the log`;
  if (head.hash !== a.head_hash) {
    return `${where} committed entry #${a.head_sequence_number} with hash ${short(a.head_hash)}, but the log's entry #${a.head_sequence_number} has hash ${short(String(head.hash))}: the log was rewritten after it was anchored`;
  }
  if (
    !verifyAnchorProof({ batch_id: batchId, sequence_number: a.head_sequence_number, hash: head.hash }, { root: a.root, proof: a.proof })
  ) {
    return `${where}: the proof of head #${a.head_sequence_number} does not lead to the root`;
  }
  let block: bigint | null;
  try {
    if (!rootBlocks.has(a.root)) rootBlocks.set(a.root, rootBlock(a.root as Hex));
    block = await rootBlocks.get(a.root)!;
  } catch (err) {
    return `${where}: the AuditAnchor contract could not be read: ${(err as Error).message}`;
  }
  if (block === null || block === 0n) return `${where}: the root is not anchored on the ledger (AuditAnchor.anchoredAtBlock is 0)`;
  if (block !== BigInt(a.block_number)) return `${where}: the ledger anchored the root at block ${block}, not at block ${a.block_number}`;
  return undefined;
}

const BYTES32_HEX = /^0x[0-9a-fA-F]{64}$/;

/** A claimed anchor of the expected shape, or null (claims come from outside). */
function batchAnchorOf(raw: unknown): BatchAnchor | null {
  if (!isRecord(raw)) return null;
  const { root, proof, head_sequence_number: seq, head_hash: hash, tx_hash: tx, block_number: block } = raw;
  if (typeof root !== 'string' || !BYTES32_HEX.test(root)) return null;
  if (!Array.isArray(proof) || proof.length > 64 || !proof.every((p) => typeof p === 'string' && BYTES32_HEX.test(p))) return null;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return null;
  if (typeof hash !== 'string' || !HASH_HEX.test(hash)) return null;
  if (typeof tx !== 'string' || !BYTES32_HEX.test(tx) || typeof block !== 'number' || !Number.isSafeInteger(block) || block < 0)
    return null;
  return {
    anchor_id: typeof raw.anchor_id === 'string' ? raw.anchor_id : '',
    head_sequence_number: seq,
    head_hash: hash,
    root: root.toLowerCase() as Hex,
    proof: proof.map((p) => (p as string).toLowerCase() as Hex),
    tx_hash: tx,
    block_number: block,
  };
}

async function evidenceChecks(e: AuditEntry, i: number, fetchEvidence: EvidenceFetcher | undefined): Promise<AuditCheck[]> {
  const ref = entryRef(e, i);
  const cidCheck = (ok: boolean, detail: string): AuditCheck => ({ ...ref, check: 'evidence_cid', ok, detail });
  const contentCheck = (ok: boolean, detail: string): AuditCheck => ({ ...ref, check: 'evidence_content', ok, detail });

  const cidText = e.payload.evidence_ipfs_cid;
  if (typeof cidText !== 'string' || cidText.length === 0) return [cidCheck(false, 'payload.evidence_ipfs_cid is missing')];
  let cid: CID;
  try {
    cid = CID.parse(cidText);
  } catch {
    return [cidCheck(false, `payload.evidence_ipfs_cid ${JSON.stringify(cidText)} is not a CID`)];
  }
  if (!fetchEvidence)
    return [cidCheck(cid.version === 1, `${cidText} is ${cid.version === 1 ? 'a well-formed CIDv1' : 'not a CIDv1'}; content not fetched`)];

  let fetched: Awaited<ReturnType<EvidenceFetcher>>;
  try {
    fetched = await fetchEvidence(cidText);
  } catch (err) {
    return [cidCheck(false, `fetching ${cidText} failed: ${(err as Error).message}`)];
  }
  if (!fetched) return [cidCheck(false, `${cidText} is not available from IPFS`)];

  const out: AuditCheck[] = [];
  try {
    const rebuilt = CID.parse((await buildUnixfsDirectory(fetched.files)).cid);
    const names = fetched.files
      .map((f) => f.path)
      .sort()
      .join(', ');
    out.push(
      rebuilt.equals(cid)
        ? cidCheck(true, `${cidText} re-imports from its files (${names})`)
        : cidCheck(false, `the files fetched for ${cidText} (${names}) re-import to ${rebuilt.toString()}`),
    );
  } catch (err) {
    out.push(cidCheck(false, `the files fetched for ${cidText} cannot be re-imported: ${(err as Error).message}`));
  }

  const evidence = e.payload.evidence;
  const file = fetched.files.find((f) => f.path === EVIDENCE_FILE);
  if (!isRecord(evidence)) {
    out.push(contentCheck(false, 'payload.evidence is missing or not an object'));
  } else if (!file) {
    out.push(contentCheck(false, `${cidText} has no ${EVIDENCE_FILE}`));
  } else {
    try {
      const expected = canonicalEvidenceBytes(evidence);
      out.push(
        bytesEqual(expected, file.bytes)
          ? contentCheck(true, `${EVIDENCE_FILE} (${file.bytes.byteLength} bytes) equals the canonical JSON of payload.evidence`)
          : contentCheck(
              false,
              `${EVIDENCE_FILE} (${file.bytes.byteLength} bytes) differs from the canonical JSON of payload.evidence (${expected.byteLength} bytes)`,
            ),
      );
    } catch (err) {
      out.push(contentCheck(false, `payload.evidence cannot be canonicalised: ${(err as Error).message}`));
    }
  }
  return out;
}

/** A description of what is wrong with an entry's shape, or undefined when it is well-formed. */
function shapeProblem(e: unknown): string | undefined {
  if (!isRecord(e)) return 'entry is not an object';
  const bad: string[] = [];
  if (typeof e.batch_id !== 'string') bad.push('batch_id');
  if (typeof e.sequence_number !== 'number' || !Number.isSafeInteger(e.sequence_number)) bad.push('sequence_number');
  if (typeof e.message_id !== 'string') bad.push('message_id');
  if (typeof e.type !== 'string') bad.push('type');
  if (typeof e.at !== 'string') bad.push('at');
  if (typeof e.actor !== 'string') bad.push('actor');
  if (!isRecord(e.payload)) bad.push('payload');
  if (typeof e.prev_hash !== 'string' || !HASH_HEX.test(e.prev_hash)) bad.push('prev_hash');
  if (typeof e.hash !== 'string' || !HASH_HEX.test(e.hash)) bad.push('hash');
  return bad.length > 0 ? `malformed entry: ${bad.join(', ')} missing or invalid` : undefined;
}

function entryRef(e: unknown, i: number): { sequence_number: number; message_id: string } {
  const r = isRecord(e) ? e : {};
  return {
    sequence_number: typeof r.sequence_number === 'number' ? r.sequence_number : i + 1,
    message_id: typeof r.message_id === 'string' ? r.message_id : `#${i + 1}`,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A token id from a payload: a decimal string (or a safe integer), else undefined. */
function parseTokenId(v: unknown): bigint | undefined {
  if (typeof v === 'string' && /^\d{1,78}$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return undefined;
}

function stageLabel(code: number): string {
  const name = STAGE_NAMES.get(code);
  return name ? `${name}=${code}` : `code ${code}`;
}

function eventRef(s: ChainStage): string {
  return `tx ${s.txHash}#${s.logIndex}`;
}

/** First 10 hex digits of a hash, for messages. */
function short(hash: string): string {
  const h = hash.startsWith('0x') ? hash.slice(2) : hash;
  return h.length > 12 ? `${hash.startsWith('0x') ? '0x' : ''}${h.slice(0, 10)}…` : hash;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
