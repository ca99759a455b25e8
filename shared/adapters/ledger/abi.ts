/**
 * ABIs of the ledger contracts (`infra/ledger/contracts/*.sol`) as `as const` literals, so viem
 * infers argument and return types. `test/unit/ledger-abi.test.ts` proves they equal what solc
 * compiles (every function, event and error, with parameter names, types and indexing).
 */

export { STAGE_CODES } from '../../domain/custody';
import type { STAGE_CODES } from '../../domain/custody';

/** A stage name that TraceLog can record. */
export type LedgerStageName = keyof typeof STAGE_CODES;

/** OpenZeppelin AccessControl (and ERC-165): the part both contracts share. */
const accessControlAbi = [
  { type: 'function', name: 'DEFAULT_ADMIN_ROLE', inputs: [], outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view' },
  {
    type: 'function', name: 'getRoleAdmin',
    inputs: [
      { name: 'role', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'grantRole',
    inputs: [
      { name: 'role', type: 'bytes32' },
      { name: 'account', type: 'address' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'hasRole',
    inputs: [
      { name: 'role', type: 'bytes32' },
      { name: 'account', type: 'address' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'renounceRole',
    inputs: [
      { name: 'role', type: 'bytes32' },
      { name: 'callerConfirmation', type: 'address' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'revokeRole',
    inputs: [
      { name: 'role', type: 'bytes32' },
      { name: 'account', type: 'address' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'supportsInterface',
    inputs: [
      { name: 'interfaceId', type: 'bytes4' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'view',
  },
  {
    type: 'event', name: 'RoleAdminChanged',
    inputs: [
      { name: 'role', type: 'bytes32', indexed: true },
      { name: 'previousAdminRole', type: 'bytes32', indexed: true },
      { name: 'newAdminRole', type: 'bytes32', indexed: true },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'RoleGranted',
    inputs: [
      { name: 'role', type: 'bytes32', indexed: true },
      { name: 'account', type: 'address', indexed: true },
      { name: 'sender', type: 'address', indexed: true },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'RoleRevoked',
    inputs: [
      { name: 'role', type: 'bytes32', indexed: true },
      { name: 'account', type: 'address', indexed: true },
      { name: 'sender', type: 'address', indexed: true },
    ],
    anonymous: false,
  },
  { type: 'error', name: 'AccessControlBadConfirmation', inputs: [] },
  {
    type: 'error', name: 'AccessControlUnauthorizedAccount',
    inputs: [
      { name: 'account', type: 'address' },
      { name: 'neededRole', type: 'bytes32' },
    ],
  },
] as const;

/** ERC-721 "Coffee BatchToken" (BATCH) with MINTER_ROLE; `batchIdOf` returns "" for unknown ids. */
export const batchTokenAbi = [
  ...accessControlAbi,
  { type: 'constructor', inputs: [], stateMutability: 'nonpayable' },
  { type: 'function', name: 'MINTER_ROLE', inputs: [], outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view' },
  {
    type: 'function', name: 'approve',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'balanceOf',
    inputs: [
      { name: 'owner', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'batchIdOf',
    inputs: [
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'string' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'getApproved',
    inputs: [
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'address' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'isApprovedForAll',
    inputs: [
      { name: 'owner', type: 'address' },
      { name: 'operator', type: 'address' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'mint',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
      { name: 'batchId', type: 'string' },
      { name: 'auditHash', type: 'bytes32' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  { type: 'function', name: 'name', inputs: [], outputs: [{ name: '', type: 'string' }], stateMutability: 'view' },
  {
    type: 'function', name: 'ownerOf',
    inputs: [
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'address' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'safeTransferFrom',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'safeTransferFrom',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
      { name: 'data', type: 'bytes' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'setApprovalForAll',
    inputs: [
      { name: 'operator', type: 'address' },
      { name: 'approved', type: 'bool' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  { type: 'function', name: 'symbol', inputs: [], outputs: [{ name: '', type: 'string' }], stateMutability: 'view' },
  {
    type: 'function', name: 'tokenURI',
    inputs: [
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'string' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'transferFrom',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'event', name: 'Approval',
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'approved', type: 'address', indexed: true },
      { name: 'tokenId', type: 'uint256', indexed: true },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'ApprovalForAll',
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'operator', type: 'address', indexed: true },
      { name: 'approved', type: 'bool', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'BatchMinted',
    inputs: [
      { name: 'tokenId', type: 'uint256', indexed: true },
      { name: 'batchId', type: 'string', indexed: false },
      { name: 'auditHash', type: 'bytes32', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'Transfer',
    inputs: [
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'tokenId', type: 'uint256', indexed: true },
    ],
    anonymous: false,
  },
  {
    type: 'error', name: 'ERC721IncorrectOwner',
    inputs: [
      { name: 'sender', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
      { name: 'owner', type: 'address' },
    ],
  },
  {
    type: 'error', name: 'ERC721InsufficientApproval',
    inputs: [
      { name: 'operator', type: 'address' },
      { name: 'tokenId', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'ERC721InvalidApprover', inputs: [{ name: 'approver', type: 'address' }] },
  { type: 'error', name: 'ERC721InvalidOperator', inputs: [{ name: 'operator', type: 'address' }] },
  { type: 'error', name: 'ERC721InvalidOwner', inputs: [{ name: 'owner', type: 'address' }] },
  { type: 'error', name: 'ERC721InvalidReceiver', inputs: [{ name: 'receiver', type: 'address' }] },
  { type: 'error', name: 'ERC721InvalidSender', inputs: [{ name: 'sender', type: 'address' }] },
  { type: 'error', name: 'ERC721NonexistentToken', inputs: [{ name: 'tokenId', type: 'uint256' }] },
  { type: 'error', name: 'EmptyBatchId', inputs: [] },
] as const;

/** TraceLog: `recordStage` emits `StageRecorded`; RECORDER_ROLE; stage codes 0..MAX_STAGE (6). */
export const traceLogAbi = [
  ...accessControlAbi,
  { type: 'constructor', inputs: [], stateMutability: 'nonpayable' },
  { type: 'function', name: 'MAX_STAGE', inputs: [], outputs: [{ name: '', type: 'uint8' }], stateMutability: 'view' },
  { type: 'function', name: 'RECORDER_ROLE', inputs: [], outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view' },
  {
    type: 'function', name: 'recordStage',
    inputs: [
      { name: 'tokenId', type: 'uint256' },
      { name: 'stage', type: 'uint8' },
      { name: 'evidenceCid', type: 'string' },
      { name: 'auditHash', type: 'bytes32' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'event', name: 'StageRecorded',
    inputs: [
      { name: 'tokenId', type: 'uint256', indexed: true },
      { name: 'stage', type: 'uint8', indexed: true },
      { name: 'evidenceCid', type: 'string', indexed: false },
      { name: 'auditHash', type: 'bytes32', indexed: false },
      { name: 'recorder', type: 'address', indexed: false },
    ],
    anonymous: false,
  },
  { type: 'error', name: 'InvalidStage', inputs: [{ name: 'stage', type: 'uint8' }] },
] as const;

/** OpenZeppelin ERC-20 core: the part TestUSDC and the vault's shares share (decimals aside). */
const erc20CoreAbi = [
  {
    type: 'function', name: 'allowance',
    inputs: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'approve',
    inputs: [
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'balanceOf',
    inputs: [
      { name: 'account', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  { type: 'function', name: 'name', inputs: [], outputs: [{ name: '', type: 'string' }], stateMutability: 'view' },
  { type: 'function', name: 'symbol', inputs: [], outputs: [{ name: '', type: 'string' }], stateMutability: 'view' },
  { type: 'function', name: 'totalSupply', inputs: [], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  {
    type: 'function', name: 'transfer',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'transferFrom',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'nonpayable',
  },
  {
    type: 'event', name: 'Approval',
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'spender', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'Transfer',
    inputs: [
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'error', name: 'ERC20InsufficientAllowance',
    inputs: [
      { name: 'spender', type: 'address' },
      { name: 'allowance', type: 'uint256' },
      { name: 'needed', type: 'uint256' },
    ],
  },
  {
    type: 'error', name: 'ERC20InsufficientBalance',
    inputs: [
      { name: 'sender', type: 'address' },
      { name: 'balance', type: 'uint256' },
      { name: 'needed', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'ERC20InvalidApprover', inputs: [{ name: 'approver', type: 'address' }] },
  { type: 'error', name: 'ERC20InvalidReceiver', inputs: [{ name: 'receiver', type: 'address' }] },
  { type: 'error', name: 'ERC20InvalidSender', inputs: [{ name: 'sender', type: 'address' }] },
  { type: 'error', name: 'ERC20InvalidSpender', inputs: [{ name: 'spender', type: 'address' }] },
] as const;

/**
 * TestUSDC: "Test USD Coin" (USDC), 6 decimals, `mint(to, amount)` for MINTER_ROLE. Local chain only;
 * its ERC-20 part is also all the service uses of a real USDC contract (approve, balanceOf, transfer).
 */
export const testUsdcAbi = [
  ...accessControlAbi,
  ...erc20CoreAbi,
  { type: 'constructor', inputs: [], stateMutability: 'nonpayable' },
  { type: 'function', name: 'decimals', inputs: [], outputs: [{ name: '', type: 'uint8' }], stateMutability: 'pure' },
  {
    type: 'function', name: 'mint',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  { type: 'function', name: 'MINTER_ROLE', inputs: [], outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view' },
] as const;

/** LendingVault: refunds of unapplied buyer payments (`refundPayment`, its event and error). */
const lendingVaultRefundAbi = [
  {
    type: 'function', name: 'refundPayment',
    inputs: [
      { name: 'poRef', type: 'bytes32' },
      { name: 'refundRef', type: 'bytes32' },
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'event', name: 'PaymentRefunded',
    inputs: [
      { name: 'poRef', type: 'bytes32', indexed: true },
      { name: 'refundRef', type: 'bytes32', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'amount', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  { type: 'error', name: 'RefundRefUsed', inputs: [{ name: 'refundRef', type: 'bytes32' }] },
] as const;

/**
 * LendingVault's loss accounting: the decimals offset of its shares, the refusal of a deposit
 * that would mint no share, and the write-off of a defaulted loan (with the running total).
 */
const lendingVaultLossAbi = [
  { type: 'function', name: 'DECIMALS_OFFSET', inputs: [], outputs: [{ name: '', type: 'uint8' }], stateMutability: 'view' },
  { type: 'function', name: 'loansWrittenOff', inputs: [], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  {
    type: 'function', name: 'writeOffLoan',
    inputs: [
      { name: 'loanRef', type: 'bytes32' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'event', name: 'LoanWrittenOff',
    inputs: [
      { name: 'loanRef', type: 'bytes32', indexed: true },
      { name: 'tokenId', type: 'uint256', indexed: true },
      { name: 'principal', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  { type: 'error', name: 'ZeroShares', inputs: [{ name: 'assets', type: 'uint256' }] },
] as const;

/**
 * LendingVault: ERC-4626 over the USDC-like asset with loans on BatchToken collateral and buyer
 * payments per purchase order (OPERATOR_ROLE). Loan status codes: 0 NONE, 1 ACTIVE, 2 REPAID,
 * 3 CANCELLED, 4 DEFAULTED. Shares have 12 decimals (the asset's 6 + DECIMALS_OFFSET 6).
 */
export const lendingVaultAbi = [
  ...accessControlAbi,
  ...erc20CoreAbi,
  ...lendingVaultRefundAbi,
  { type: 'constructor', inputs: [{ name: 'asset_', type: 'address' }, { name: 'batchToken_', type: 'address' }], stateMutability: 'nonpayable' },
  { type: 'function', name: 'asset', inputs: [], outputs: [{ name: '', type: 'address' }], stateMutability: 'view' },
  { type: 'function', name: 'batchToken', inputs: [], outputs: [{ name: '', type: 'address' }], stateMutability: 'view' },
  {
    type: 'function', name: 'cancelLoan',
    inputs: [
      { name: 'loanRef', type: 'bytes32' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'convertToAssets',
    inputs: [
      { name: 'shares', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'convertToShares',
    inputs: [
      { name: 'assets', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  { type: 'function', name: 'decimals', inputs: [], outputs: [{ name: '', type: 'uint8' }], stateMutability: 'view' },
  {
    type: 'function', name: 'deposit',
    inputs: [
      { name: 'assets', type: 'uint256' },
      { name: 'receiver', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'depositFor',
    inputs: [
      { name: 'ref', type: 'bytes32' },
      { name: 'assets', type: 'uint256' },
      { name: 'receiver', type: 'address' },
    ],
    outputs: [{ name: 'shares', type: 'uint256' }], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'escrowOf',
    inputs: [
      { name: 'poRef', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  { type: 'function', name: 'idleAssets', inputs: [], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  {
    type: 'function', name: 'loanOf',
    inputs: [
      { name: 'loanRef', type: 'bytes32' },
    ],
    outputs: [{ name: 'status', type: 'uint8' }, { name: 'tokenId', type: 'uint256' }, { name: 'principal', type: 'uint256' }], stateMutability: 'view',
  },
  { type: 'function', name: 'loansOutstanding', inputs: [], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  {
    type: 'function', name: 'maxDeposit',
    inputs: [
      { name: '', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'maxMint',
    inputs: [
      { name: '', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'maxRedeem',
    inputs: [
      { name: 'owner', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'maxWithdraw',
    inputs: [
      { name: 'owner', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'mint',
    inputs: [
      { name: 'shares', type: 'uint256' },
      { name: 'receiver', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'onERC721Received',
    inputs: [
      { name: 'operator', type: 'address' },
      { name: '', type: 'address' },
      { name: '', type: 'uint256' },
      { name: '', type: 'bytes' },
    ],
    outputs: [{ name: '', type: 'bytes4' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'openLoan',
    inputs: [
      { name: 'loanRef', type: 'bytes32' },
      { name: 'tokenId', type: 'uint256' },
      { name: 'principal', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  { type: 'function', name: 'OPERATOR_ROLE', inputs: [], outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view' },
  {
    type: 'function', name: 'payPurchaseOrder',
    inputs: [
      { name: 'poRef', type: 'bytes32' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'previewDeposit',
    inputs: [
      { name: 'assets', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'previewMint',
    inputs: [
      { name: 'shares', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'previewRedeem',
    inputs: [
      { name: 'shares', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'previewWithdraw',
    inputs: [
      { name: 'assets', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view',
  },
  {
    type: 'function', name: 'redeem',
    inputs: [
      { name: 'shares', type: 'uint256' },
      { name: 'receiver', type: 'address' },
      { name: 'owner_', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'releaseRemainder',
    inputs: [
      { name: 'poRef', type: 'bytes32' },
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'repayLoan',
    inputs: [
      { name: 'loanRef', type: 'bytes32' },
      { name: 'poRef', type: 'bytes32' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [], stateMutability: 'nonpayable',
  },
  {
    type: 'function', name: 'reverseDeposit',
    inputs: [
      { name: 'ref', type: 'bytes32' },
      { name: 'owner_', type: 'address' },
      { name: 'shares', type: 'uint256' },
    ],
    outputs: [{ name: 'assets', type: 'uint256' }], stateMutability: 'nonpayable',
  },
  { type: 'function', name: 'totalAssets', inputs: [], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  { type: 'function', name: 'totalEscrow', inputs: [], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  {
    type: 'function', name: 'withdraw',
    inputs: [
      { name: 'assets', type: 'uint256' },
      { name: 'receiver', type: 'address' },
      { name: 'owner_', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }], stateMutability: 'nonpayable',
  },
  {
    type: 'event', name: 'Deposit',
    inputs: [
      { name: 'sender', type: 'address', indexed: true },
      { name: 'owner', type: 'address', indexed: true },
      { name: 'assets', type: 'uint256', indexed: false },
      { name: 'shares', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'DepositRecorded',
    inputs: [
      { name: 'ref', type: 'bytes32', indexed: true },
      { name: 'receiver', type: 'address', indexed: true },
      { name: 'assets', type: 'uint256', indexed: false },
      { name: 'shares', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'DepositReversed',
    inputs: [
      { name: 'ref', type: 'bytes32', indexed: true },
      { name: 'owner', type: 'address', indexed: true },
      { name: 'shares', type: 'uint256', indexed: false },
      { name: 'assets', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'LoanCancelled',
    inputs: [
      { name: 'loanRef', type: 'bytes32', indexed: true },
      { name: 'tokenId', type: 'uint256', indexed: true },
      { name: 'principal', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'LoanOpened',
    inputs: [
      { name: 'loanRef', type: 'bytes32', indexed: true },
      { name: 'tokenId', type: 'uint256', indexed: true },
      { name: 'principal', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'LoanRepaid',
    inputs: [
      { name: 'loanRef', type: 'bytes32', indexed: true },
      { name: 'poRef', type: 'bytes32', indexed: true },
      { name: 'principal', type: 'uint256', indexed: false },
      { name: 'interest', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'PurchaseOrderPaid',
    inputs: [
      { name: 'poRef', type: 'bytes32', indexed: true },
      { name: 'payer', type: 'address', indexed: true },
      { name: 'amount', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'RemainderReleased',
    inputs: [
      { name: 'poRef', type: 'bytes32', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'amount', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'event', name: 'Withdraw',
    inputs: [
      { name: 'sender', type: 'address', indexed: true },
      { name: 'receiver', type: 'address', indexed: true },
      { name: 'owner', type: 'address', indexed: true },
      { name: 'assets', type: 'uint256', indexed: false },
      { name: 'shares', type: 'uint256', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'error', name: 'ERC4626ExceededMaxDeposit',
    inputs: [
      { name: 'receiver', type: 'address' },
      { name: 'assets', type: 'uint256' },
      { name: 'max', type: 'uint256' },
    ],
  },
  {
    type: 'error', name: 'ERC4626ExceededMaxMint',
    inputs: [
      { name: 'receiver', type: 'address' },
      { name: 'shares', type: 'uint256' },
      { name: 'max', type: 'uint256' },
    ],
  },
  {
    type: 'error', name: 'ERC4626ExceededMaxRedeem',
    inputs: [
      { name: 'owner', type: 'address' },
      { name: 'shares', type: 'uint256' },
      { name: 'max', type: 'uint256' },
    ],
  },
  {
    type: 'error', name: 'ERC4626ExceededMaxWithdraw',
    inputs: [
      { name: 'owner', type: 'address' },
      { name: 'assets', type: 'uint256' },
      { name: 'max', type: 'uint256' },
    ],
  },
  {
    type: 'error', name: 'InsufficientEscrow',
    inputs: [
      { name: 'poRef', type: 'bytes32' },
      { name: 'available', type: 'uint256' },
      { name: 'needed', type: 'uint256' },
    ],
  },
  {
    type: 'error', name: 'InsufficientLiquidity',
    inputs: [
      { name: 'idle', type: 'uint256' },
      { name: 'needed', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'LoanExists', inputs: [{ name: 'loanRef', type: 'bytes32' }] },
  { type: 'error', name: 'LoanNotActive', inputs: [{ name: 'loanRef', type: 'bytes32' }] },
  { type: 'error', name: 'OperatorOnly', inputs: [] },
  { type: 'error', name: 'ReentrancyGuardReentrantCall', inputs: [] },
  { type: 'error', name: 'RefUsed', inputs: [{ name: 'ref', type: 'bytes32' }] },
  {
    type: 'error', name: 'RepaymentBelowPrincipal',
    inputs: [
      { name: 'loanRef', type: 'bytes32' },
      { name: 'principal', type: 'uint256' },
      { name: 'amount', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'SafeERC20FailedOperation', inputs: [{ name: 'token', type: 'address' }] },
  {
    type: 'error', name: 'TokenLocked',
    inputs: [
      { name: 'tokenId', type: 'uint256' },
      { name: 'loanRef', type: 'bytes32' },
    ],
  },
  { type: 'error', name: 'UnexpectedToken', inputs: [{ name: 'token', type: 'address' }] },
  { type: 'error', name: 'ZeroAmount', inputs: [] },
  ...lendingVaultLossAbi,
] as const;

/**
 * AuditAnchor (docs/api/anchoring.md#anchoring-of-the-audit-log): `anchor(root, headCount)` commits one Merkle root of many batches'
 * audit heads (ANCHORER_ROLE, once per root); `anchoredAtBlock(root)` is its block (0: never).
 */
export const auditAnchorAbi = [
  ...accessControlAbi,
  { type: 'constructor', inputs: [], stateMutability: 'nonpayable' },
  { type: 'function', name: 'ANCHORER_ROLE', inputs: [], outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'view' },
  {
    type: 'function', name: 'anchor',
    inputs: [{ name: 'root', type: 'bytes32' }, { name: 'headCount', type: 'uint32' }],
    outputs: [], stateMutability: 'nonpayable',
  },
  { type: 'function', name: 'anchoredAtBlock', inputs: [{ name: '', type: 'bytes32' }], outputs: [{ name: '', type: 'uint256' }], stateMutability: 'view' },
  {
    type: 'function', name: 'headLeaf',
    inputs: [{ name: 'batchId', type: 'string' }, { name: 'sequence', type: 'uint256' }, { name: 'entryHash', type: 'bytes32' }],
    outputs: [{ name: '', type: 'bytes32' }], stateMutability: 'pure',
  },
  {
    type: 'function', name: 'isAnchoredHead',
    inputs: [
      { name: 'root', type: 'bytes32' },
      { name: 'proof', type: 'bytes32[]' },
      { name: 'batchId', type: 'string' },
      { name: 'sequence', type: 'uint256' },
      { name: 'entryHash', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'bool' }], stateMutability: 'view',
  },
  {
    type: 'event', name: 'AuditRootAnchored',
    inputs: [
      { name: 'root', type: 'bytes32', indexed: true },
      { name: 'headCount', type: 'uint32', indexed: false },
      { name: 'anchorer', type: 'address', indexed: false },
    ],
    anonymous: false,
  },
  { type: 'error', name: 'AlreadyAnchored', inputs: [{ name: 'root', type: 'bytes32' }] },
  { type: 'error', name: 'EmptyAnchor', inputs: [] },
] as const;
