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
