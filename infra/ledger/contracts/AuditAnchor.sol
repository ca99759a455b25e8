// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title AuditAnchor
/// @notice Anchors the audit logs of many batches at once (docs/api/anchoring.md#anchoring-of-the-audit-log): each anchor is the Merkle
///         root of the audit heads `(batchId, sequence, entryHash)` written since the previous one.
///         Anyone holding an entry's head and proof can check it here without trusting the service.
/// @dev Leaves are OpenZeppelin StandardMerkleTree leaves of the types (string, uint256, bytes32):
///      keccak256(bytes.concat(keccak256(abi.encode(batchId, sequence, entryHash)))), sorted-pair
///      hashing as MerkleProof expects (shared/domain/anchoring.ts builds the same tree).
contract AuditAnchor is AccessControl {
    bytes32 public constant ANCHORER_ROLE = keccak256("ANCHORER_ROLE");

    /// @notice Block number at which each root was anchored (0: never).
    mapping(bytes32 => uint256) public anchoredAtBlock;

    /// @notice The root was anchored before (an anchor is written once).
    error AlreadyAnchored(bytes32 root);
    /// @notice An anchor must name a non-zero root of at least one head.
    error EmptyAnchor();

    event AuditRootAnchored(bytes32 indexed root, uint32 headCount, address anchorer);

    constructor() {
        _grantRole(DEFAULT_ADMIN_ROLE, _msgSender());
        _grantRole(ANCHORER_ROLE, _msgSender());
    }

    /// @notice Anchors `root`, the Merkle root of `headCount` audit heads.
    function anchor(bytes32 root, uint32 headCount) external onlyRole(ANCHORER_ROLE) {
        if (root == bytes32(0) || headCount == 0) revert EmptyAnchor();
        if (anchoredAtBlock[root] != 0) revert AlreadyAnchored(root);
        anchoredAtBlock[root] = block.number;
        emit AuditRootAnchored(root, headCount, _msgSender());
    }

    /// @notice The leaf of an audit head, as the tree of an anchor holds it.
    function headLeaf(string calldata batchId, uint256 sequence, bytes32 entryHash) public pure returns (bytes32) {
        return keccak256(bytes.concat(keccak256(abi.encode(batchId, sequence, entryHash))));
    }

    /// @notice True when `root` is anchored and `proof` shows the head `(batchId, sequence, entryHash)` under it.
    function isAnchoredHead(bytes32 root, bytes32[] calldata proof, string calldata batchId, uint256 sequence, bytes32 entryHash)
        external
        view
        returns (bool)
    {
        return anchoredAtBlock[root] != 0 && MerkleProof.verifyCalldata(proof, root, headLeaf(batchId, sequence, entryHash));
    }
}
