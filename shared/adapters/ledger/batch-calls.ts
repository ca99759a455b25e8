import { decodeErrorResult, encodeFunctionData, getAbiItem, parseEventLogs, toFunctionSelector, type Hex, type Log } from 'viem';
import type { BatchRecordOutcome } from '../../domain/ledger-batching';
import type { BatchedCall } from '../../domain/ports/ledger';
import { STAGE_CODES, batchTokenAbi, traceLogAbi } from './abi';

/**
 * The batched calls of the ledger writer (docs/ledger.md#the-batched-writer), built and read back
 * without a chain: `BatchToken.mintBatch(custodian, records)` and `TraceLog.recordStages(records)`,
 * and each record's fate from the mined transaction's events.
 */

const UINT256_MAX = (1n << 256n) - 1n;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** RangeError unless `tokenId` is a bigint in 0 … 2^256-1. */
export function checkTokenId(tokenId: bigint): void {
  if (typeof tokenId !== 'bigint' || tokenId < 0n || tokenId > UINT256_MAX) {
    throw new RangeError('tokenId must be a bigint in 0 … 2^256-1');
  }
}

/** RangeError unless `value` is 0x + 64 hex digits. */
export function checkBytes32(name: string, value: string): void {
  if (!BYTES32.test(value)) throw new RangeError(`${name} must be 0x + 64 hex digits`);
}

/**
 * The calldata of a batched call and which contract it goes to (`batchToken` / `traceLog`), with
 * the operation's name for errors. Errors: RangeError for an empty call or a record that cannot
 * be encoded (a bad token id or hash, an unknown stage, an evidence CID that is not a string), and
 * whatever viem's encoder throws for the rest; nothing is sent.
 */
export function batchCallData(call: BatchedCall, custodian: Hex): { contract: 'batchToken' | 'traceLog'; operation: string; data: Hex } {
  if (call.records.length === 0) throw new RangeError(`${call.kind === 'MINT' ? 'mintBatch' : 'recordStages'}: no records`);
  if (call.kind === 'MINT') {
    for (const r of call.records) {
      checkTokenId(r.tokenId);
      checkBytes32('auditHash', r.auditHash);
      if (typeof r.batchId !== 'string') throw new RangeError(`mintBatch: token ${r.tokenId} has no batch id`);
    }
    const data = encodeFunctionData({ abi: batchTokenAbi, functionName: 'mintBatch', args: [custodian, call.records] });
    return { contract: 'batchToken', operation: 'mintBatch', data };
  }
  const args = call.records.map((r) => {
    checkTokenId(r.tokenId);
    checkBytes32('auditHash', r.auditHash);
    if (!Object.hasOwn(STAGE_CODES, r.stage)) throw new RangeError(`recordStages: unknown stage ${String(r.stage)}`);
    if (typeof r.evidenceCid !== 'string') throw new RangeError(`recordStages: token ${r.tokenId} stage ${r.stage} has no evidence CID`);
    return { tokenId: r.tokenId, stage: STAGE_CODES[r.stage], evidenceCid: r.evidenceCid, auditHash: r.auditHash };
  });
  return {
    contract: 'traceLog',
    operation: 'recordStages',
    data: encodeFunctionData({ abi: traceLogAbi, functionName: 'recordStages', args: [args] }),
  };
}

/** The 4-byte selector of a kind's batched function: `mintBatch` (MINT) or `recordStages` (TRACE_STAGE). */
export function batchSelector(kind: 'MINT' | 'TRACE_STAGE'): Hex {
  return kind === 'MINT'
    ? toFunctionSelector(getAbiItem({ abi: batchTokenAbi, name: 'mintBatch' }))
    : toFunctionSelector(getAbiItem({ abi: traceLogAbi, name: 'recordStages' }));
}

/**
 * Each record's fate from the logs of a mined batched transaction, in record order, from the
 * events of the contract at `address`: BatchMinted / StageRecorded → written; MintSkipped /
 * StageSkipped → skipped, with the decoded error as reason. Errors: Error when the logs hold other
 * than `count` record events.
 */
export function batchOutcomesOf(logs: Log[], address: Hex, kind: 'MINT' | 'TRACE_STAGE', count: number, txHash: Hex): BatchRecordOutcome[] {
  const own = logs.filter((l) => l.address.toLowerCase() === address.toLowerCase());
  const outcomes: BatchRecordOutcome[] = [];
  if (kind === 'MINT') {
    for (const log of parseEventLogs({ abi: batchTokenAbi, logs: own, eventName: ['BatchMinted', 'MintSkipped'] })) {
      outcomes.push(
        log.eventName === 'BatchMinted'
          ? { written: true }
          : { written: false, reason: skipReason(batchTokenAbi, log.args.reason, `token ${log.args.tokenId}`) },
      );
    }
  } else {
    for (const log of parseEventLogs({ abi: traceLogAbi, logs: own, eventName: ['StageRecorded', 'StageSkipped'] })) {
      outcomes.push(
        log.eventName === 'StageRecorded'
          ? { written: true }
          : { written: false, reason: skipReason(traceLogAbi, log.args.reason, `token ${log.args.tokenId} stage ${log.args.stage}`) },
      );
    }
  }
  if (outcomes.length !== count) throw new Error(`batched transaction ${txHash} holds ${outcomes.length} record events, expected ${count}`);
  return outcomes;
}

/** A skipped record's reason: the contract's error by name (e.g. ERC721InvalidSender: the token exists), for `what`. */
function skipReason(abi: typeof batchTokenAbi | typeof traceLogAbi, reason: Hex, what: string): string {
  try {
    const { errorName } = decodeErrorResult({ abi, data: reason });
    if (errorName === 'ERC721InvalidSender') return `${what} already exists on the ledger (skipped: ${errorName})`;
    return `${what} skipped by the contract: ${errorName}`;
  } catch {
    return `${what} skipped by the contract: ${reason}`;
  }
}
