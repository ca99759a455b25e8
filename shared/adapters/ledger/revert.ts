import {
  BaseError,
  ContractFunctionRevertedError,
  ExecutionRevertedError,
  HttpRequestError,
  RawContractError,
  TimeoutError,
  decodeErrorResult,
  type Abi,
  type Hex,
} from 'viem';
import { auditAnchorAbi, batchTokenAbi, lendingVaultAbi, testUsdcAbi, traceLogAbi } from './abi';

/**
 * How a failed ledger call is told apart (the single ledger writer's retry policy rests on it): a
 * revert is deterministic — the same call reverts again — while a transport failure (network,
 * timeout, HTTP 5xx / 429) is not. A revert shows in several shapes: viem's
 * ContractFunctionRevertedError when the call was made with an ABI (simulateContract, readContract);
 * a bare ExecutionRevertedError / RawContractError; or, from hardhat during eth_estimateGas, a
 * JSON-RPC -32603 "An internal error was received." whose `data` (or `data.data`) carries the revert
 * data. The revert data is decoded with the errors of every contract the service calls.
 */

/** Every custom error the service's contracts (and OpenZeppelin's, and the asset's) can revert with. */
const LEDGER_ERRORS_ABI = [...batchTokenAbi, ...traceLogAbi, ...auditAnchorAbi, ...lendingVaultAbi, ...testUsdcAbi].filter(
  (e) => e.type === 'error',
) as Abi;

/** The 0x-hex revert data a JSON-RPC error carries (`data`, or `data.data` on hardhat and some nodes). */
function revertDataOf(e: unknown): Hex | undefined {
  const d = (e as { data?: unknown }).data;
  const hex = typeof d === 'string' ? d : typeof (d as { data?: unknown })?.data === 'string' ? (d as { data: string }).data : undefined;
  return hex && /^0x([0-9a-fA-F]{2})*$/.test(hex) ? (hex as Hex) : undefined;
}

/**
 * The reason of a revert, when `err` is one: the custom error's name (`AlreadyAnchored`,
 * `ERC721InvalidSender`, `TokenLocked`, `AccessControlUnauthorizedAccount`, …), the reason string of
 * a `require`, "reverted with unknown error 0x…" for a selector none of the contracts declare, or
 * "reverted" without data. `undefined` when `err` is not a revert (the RPC failed, or not a viem error).
 */
export function revertReasonOf(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const decoded = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (decoded instanceof ContractFunctionRevertedError) {
    const name = decoded.data?.errorName;
    if (name && name !== 'Error' && name !== 'Panic') return name;
    if (decoded.reason) return decoded.reason;
    if (name) return name;
  }
  const withData = err.walk((e) => revertDataOf(e) !== undefined);
  const data = withData ? revertDataOf(withData) : undefined;
  if (data && data.length >= 10) {
    try {
      const result = decodeErrorResult({ abi: LEDGER_ERRORS_ABI, data });
      if (result.errorName === 'Error' && typeof result.args?.[0] === 'string') return result.args[0];
      return result.errorName;
    } catch {
      return `reverted with unknown error ${data.slice(0, 10)}`;
    }
  }
  if (decoded || err.walk((e) => e instanceof RawContractError || e instanceof ExecutionRevertedError)) return 'reverted';
  return undefined;
}

/**
 * True when `err` is a transport failure of the ledger's RPC endpoint: no answer (network error,
 * timeout) or an HTTP 5xx / 429 answer. A JSON-RPC error the node answered (a revert, "nonce too
 * low", "insufficient funds") is not one.
 */
export function isTransportFailure(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  if (revertReasonOf(err) !== undefined) return false;
  return Boolean(
    err.walk((e) => {
      if (e instanceof TimeoutError) return true;
      if (e instanceof HttpRequestError) return e.status === undefined || e.status >= 500 || e.status === 429;
      return false;
    }),
  );
}
