// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Utils} from "@openzeppelin/contracts/token/ERC721/utils/ERC721Utils.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {BitMaps} from "@openzeppelin/contracts/utils/structs/BitMaps.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @title Coffee BatchToken
/// @notice One ERC-721 token per coffee batch. The token id stands for the batch: batch
///         `BATCH-<year>-<n>` is token `year × 10^12 + n`, so `batchIdOf` derives the batch id from the
///         token id and nothing per batch is stored but one bit. An audit hash is recorded at mint
///         (in `BatchMinted`).
/// @dev Storage per token is what makes a mint cheap (docs/ledger.md#batchtoken-storage):
///      - minted ids are bits of an OpenZeppelin `BitMaps` (256 ids per slot);
///      - each chunk of 256 consecutive ids has one owner, the address its first token was minted to;
///        a token minted to that address stores nothing else;
///      - a token minted to another address, and every token once transferred, has an explicit owner
///        record (ERC721's own `_owners`, written through `ERC721._update`).
///      `_ownerOf` resolves them in that order; balances are credited with `_increaseBalance` for the
///      tokens ERC721 does not record itself, so `balanceOf`, approvals, transfers and their checks
///      are OpenZeppelin's, unchanged. There is no burn: a burn would have to clear the token's bit.
///      Minting an id that exists already is refused with `ERC721InvalidSender(address(0))`, so a
///      replayed mint can never create a second token.
contract BatchToken is ERC721, AccessControl {
    using BitMaps for BitMaps.BitMap;

    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    /// @dev Token id = year × YEAR_FACTOR + n (shared/domain/ids.ts `tokenIdForBatch`).
    uint256 private constant YEAR_FACTOR = 1e12;

    /// @notice `mint` was called with an empty batch id.
    error EmptyBatchId();

    /// @notice The batch id given is not the one `tokenId` stands for (`expected`, as `batchIdOf` derives it).
    error BatchIdMismatch(uint256 tokenId, string expected);

    event BatchMinted(uint256 indexed tokenId, string batchId, bytes32 auditHash);

    /// @notice A record of `mintBatch` that was skipped; `reason` is the ABI-encoded error `mint`
    ///         would have reverted with (`EmptyBatchId()`; `ERC721InvalidSender(address(0))` for an id
    ///         that exists, also one earlier in the same call; `BatchIdMismatch(tokenId, expected)`).
    ///         The other records are minted.
    event MintSkipped(uint256 indexed tokenId, bytes reason);

    /// @notice One token of `mintBatch`: the arguments of `mint` but the recipient.
    struct MintRecord {
        uint256 tokenId;
        string batchId;
        bytes32 auditHash;
    }

    BitMaps.BitMap private _minted;
    mapping(uint256 chunk => address owner) private _chunkOwner;

    constructor() ERC721("Coffee BatchToken", "BATCH") {
        _grantRole(DEFAULT_ADMIN_ROLE, _msgSender());
        _grantRole(MINTER_ROLE, _msgSender());
    }

    /// @notice Mints `tokenId` to `to` for batch `batchId`. Reverts when `batchId` is empty
    ///         (`EmptyBatchId`), when the id exists already (`ERC721InvalidSender(address(0))`), when
    ///         `batchId` is not the batch id of `tokenId` (`BatchIdMismatch`), when `to` is the zero
    ///         address (`ERC721InvalidReceiver`) or a contract that does not accept ERC-721, or when the
    ///         caller lacks MINTER_ROLE. Emits `Transfer` and `BatchMinted`.
    function mint(address to, uint256 tokenId, string calldata batchId, bytes32 auditHash)
        external
        onlyRole(MINTER_ROLE)
    {
        if (to == address(0)) revert ERC721InvalidReceiver(address(0));
        bytes memory reason = _refusal(tokenId, batchId);
        if (reason.length != 0) {
            assembly ("memory-safe") {
                revert(add(reason, 0x20), mload(reason))
            }
        }
        _mintToken(to, tokenId, to.code.length != 0);
        emit BatchMinted(tokenId, batchId, auditHash);
    }

    /// @notice Mints every record of `records` to `to` in one transaction, each exactly as `mint`
    ///         would (its own `Transfer` and `BatchMinted` events, in order). A record `mint` would
    ///         refuse (empty batch id, id exists, batch id not the token's) is skipped with `MintSkipped`
    ///         and never reverts the others. Reverts as a whole only when the caller lacks MINTER_ROLE,
    ///         `to` is the zero address, or `to` is a contract that does not accept ERC-721 (asked for
    ///         each token, as `mint` does; an account without code is not asked).
    /// @return minted The number of records minted.
    function mintBatch(address to, MintRecord[] calldata records)
        external
        onlyRole(MINTER_ROLE)
        returns (uint256 minted)
    {
        if (to == address(0)) revert ERC721InvalidReceiver(address(0));
        bool askReceiver = to.code.length != 0;
        for (uint256 i = 0; i < records.length; i++) {
            MintRecord calldata r = records[i];
            bytes memory reason = _refusal(r.tokenId, r.batchId);
            if (reason.length != 0) {
                emit MintSkipped(r.tokenId, reason);
                continue;
            }
            _mintToken(to, r.tokenId, askReceiver);
            emit BatchMinted(r.tokenId, r.batchId, r.auditHash);
            minted++;
        }
    }

    /// @notice The batch id of `tokenId` when it exists — `BATCH-<year>-<n>` with year = tokenId / 10^12
    ///         and n = tokenId % 10^12 written with at least 6 digits (zero-padded), e.g. token
    ///         2026000000000042 → "BATCH-2026-000042" — or "" when no such token exists (no revert).
    ///         An empty batch id cannot be minted, so "" always means "no such token".
    /// @dev Derived, not stored: `mint` refuses a batch id other than this one, so it is the batch id
    ///      the token's `BatchMinted` event carries.
    function batchIdOf(uint256 tokenId) external view returns (string memory) {
        return _minted.get(tokenId) ? _batchIdFor(tokenId) : "";
    }

    function supportsInterface(bytes4 interfaceId)
        public
        view
        override(ERC721, AccessControl)
        returns (bool)
    {
        return super.supportsInterface(interfaceId);
    }

    /// @dev The owner: the explicit record when there is one, else the chunk's owner for a minted id,
    ///      else address(0) (no such token).
    function _ownerOf(uint256 tokenId) internal view override returns (address) {
        address owner = super._ownerOf(tokenId);
        if (owner != address(0) || !_minted.get(tokenId)) return owner;
        return _chunkOwner[tokenId >> 8];
    }

    /// @dev The ABI-encoded error `mint` refuses (`tokenId`, `batchId`) with, or "" when it may be minted.
    function _refusal(uint256 tokenId, string calldata batchId) private view returns (bytes memory) {
        if (bytes(batchId).length == 0) return abi.encodeWithSelector(EmptyBatchId.selector);
        if (_minted.get(tokenId)) return abi.encodeWithSelector(ERC721InvalidSender.selector, address(0));
        string memory expected = _batchIdFor(tokenId);
        if (keccak256(bytes(batchId)) != keccak256(bytes(expected))) {
            return abi.encodeWithSelector(BatchIdMismatch.selector, tokenId, expected);
        }
        return "";
    }

    /// @dev Mints `tokenId` (not minted yet) to `to` (not zero): sets its bit; records nothing more when
    ///      `to` owns the token's chunk (becoming its owner when the chunk has none), crediting `to` and
    ///      emitting `Transfer` here; otherwise an explicit owner record through `ERC721._update`, which
    ///      credits and emits itself. Then asks `to` for `onERC721Received` when `askReceiver`.
    function _mintToken(address to, uint256 tokenId, bool askReceiver) private {
        uint256 chunk = tokenId >> 8;
        address chunkOwner = _chunkOwner[chunk];
        if (chunkOwner == address(0)) {
            _chunkOwner[chunk] = to;
            chunkOwner = to;
        }
        if (chunkOwner == to) {
            _increaseBalance(to, 1);
            emit Transfer(address(0), to, tokenId);
        } else {
            _update(to, tokenId, address(0));
        }
        _minted.set(tokenId);
        if (askReceiver) ERC721Utils.checkOnERC721Received(_msgSender(), address(0), to, tokenId, "");
    }

    /// @dev `BATCH-<tokenId / 10^12>-<tokenId % 10^12, at least 6 digits>`.
    function _batchIdFor(uint256 tokenId) private pure returns (string memory) {
        uint256 n = tokenId % YEAR_FACTOR;
        string memory year = Strings.toString(tokenId / YEAR_FACTOR);
        if (n >= 1e6) return string.concat("BATCH-", year, "-", Strings.toString(n));
        // Below 10^6, n's six zero-padded digits are those of 10^6 + n after its leading "1",
        // which becomes the "-".
        bytes memory dashed = bytes(Strings.toString(1e6 + n));
        dashed[0] = "-";
        return string.concat("BATCH-", year, string(dashed));
    }
}
