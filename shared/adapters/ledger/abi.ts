/**
 * The ledger contracts' ABIs and stage codes, for the adapters and tools that talk to the chain.
 *
 * The ABIs are generated from the compiled contracts (`npm run gen:abi` writes
 * ./abi.generated.ts; test/unit/ledger-abi.test.ts fails when it differs from what solc compiles):
 * every function, event and error of each contract, as `as const` literals so viem infers argument
 * and return types. Nothing here is kept by hand but the stage names. No hand-written subset is
 * needed for other contracts: in AWS the vault's asset is a real USDC contract, and the service
 * reads it through `testUsdcAbi`'s ERC-20 part only (`balanceOf`), which every ERC-20 shares.
 * See docs/generated-code.md.
 */

export { auditAnchorAbi, batchTokenAbi, lendingVaultAbi, testUsdcAbi, traceLogAbi } from './abi.generated';
export { STAGE_CODES } from '../../domain/custody';
import type { STAGE_CODES } from '../../domain/custody';

/** A stage name that TraceLog can record. */
export type LedgerStageName = keyof typeof STAGE_CODES;
