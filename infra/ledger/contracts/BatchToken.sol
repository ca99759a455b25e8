// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

/// @title Coffee BatchToken
/// @notice One ERC-721 token per coffee batch. The token id is chosen by the service; the batch id
///         (the service's identifier) and an audit hash are recorded at mint.
/// @dev Minting an id that already exists reverts with OpenZeppelin's
///      `ERC721InvalidSender(address(0))`, so a replayed mint can never create a second token.
///      `batchIdOf` RETURNS "" for an unknown token id (it does not revert); since an empty batch id
///      cannot be minted (`EmptyBatchId`), "" always means "no such token".
contract BatchToken is ERC721, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    /// @notice `mint` was called with an empty batch id.
    error EmptyBatchId();

    event BatchMinted(uint256 indexed tokenId, string batchId, bytes32 auditHash);

    /// @notice A record of `mintBatch` that was skipped; `reason` is the ABI-encoded error `mint`
    ///         would have reverted with (`ERC721InvalidSender(address(0))` for an id that exists,
    ///         also one earlier in the same call; `EmptyBatchId()`). The other records are minted.
    event MintSkipped(uint256 indexed tokenId, bytes reason);

    /// @notice One token of `mintBatch`: the arguments of `mint` but the recipient.
    struct MintRecord {
        uint256 tokenId;
        string batchId;
        bytes32 auditHash;
    }

    mapping(uint256 tokenId => string batchId) private _batchIds;

    constructor() ERC721("Coffee BatchToken", "BATCH") {
        _grantRole(DEFAULT_ADMIN_ROLE, _msgSender());
        _grantRole(MINTER_ROLE, _msgSender());
    }

    /// @notice Mints `tokenId` to `to` for batch `batchId`. Reverts when the id exists already
    ///         (`ERC721InvalidSender(address(0))`), when `batchId` is empty (`EmptyBatchId`), when
    ///         the caller lacks MINTER_ROLE, or when `to` is a contract that does not accept ERC-721.
    function mint(address to, uint256 tokenId, string calldata batchId, bytes32 auditHash)
        external
        onlyRole(MINTER_ROLE)
    {
        if (bytes(batchId).length == 0) revert EmptyBatchId();
        _batchIds[tokenId] = batchId;
        _safeMint(to, tokenId);
        emit BatchMinted(tokenId, batchId, auditHash);
    }

    /// @notice Mints every record of `records` to `to` in one transaction, each exactly as `mint`
    ///         would (its own `Transfer` and `BatchMinted` events, in order). A record `mint` would
    ///         refuse (its id exists, its batch id is empty) is skipped with `MintSkipped` and never
    ///         reverts the others. Reverts as a whole only when the caller lacks MINTER_ROLE or `to`
    ///         is a contract that does not accept ERC-721 (the same for every record).
    /// @return minted The number of records minted.
    function mintBatch(address to, MintRecord[] calldata records)
        external
        onlyRole(MINTER_ROLE)
        returns (uint256 minted)
    {
        for (uint256 i = 0; i < records.length; i++) {
            MintRecord calldata r = records[i];
            if (bytes(r.batchId).length == 0) {
                emit MintSkipped(r.tokenId, abi.encodeWithSelector(EmptyBatchId.selector));
                continue;
            }
            if (_ownerOf(r.tokenId) != address(0)) {
                emit MintSkipped(r.tokenId, abi.encodeWithSelector(ERC721InvalidSender.selector, address(0)));
                continue;
            }
            _batchIds[r.tokenId] = r.batchId;
            _safeMint(to, r.tokenId);
            emit BatchMinted(r.tokenId, r.batchId, r.auditHash);
            minted++;
        }
    }

    /// @notice The batch id recorded for `tokenId`, or "" when no such token exists (no revert).
    function batchIdOf(uint256 tokenId) external view returns (string memory) {
        return _batchIds[tokenId];
    }

    function supportsInterface(bytes4 interfaceId)
        public
        view
        override(ERC721, AccessControl)
        returns (bool)
    {
        return super.supportsInterface(interfaceId);
    }
}
