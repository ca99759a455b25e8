// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

/// @title TraceLog
/// @notice Append-only log of a batch's supply-chain stages, as events.
/// @dev Stage codes: DELIVERED=0, GRADED=1, MILLED=2, WAREHOUSED=3, COMMITTED=4, EXPORTED=5,
///      SETTLED=6. Only the range is checked here; the service enforces the order of stages.
contract TraceLog is AccessControl {
    bytes32 public constant RECORDER_ROLE = keccak256("RECORDER_ROLE");

    /// @notice The highest stage code (SETTLED).
    uint8 public constant MAX_STAGE = 6;

    /// @notice `recordStage` was called with a stage code above MAX_STAGE.
    error InvalidStage(uint8 stage);

    event StageRecorded(
        uint256 indexed tokenId, uint8 indexed stage, string evidenceCid, bytes32 auditHash, address recorder
    );

    constructor() {
        _grantRole(DEFAULT_ADMIN_ROLE, _msgSender());
        _grantRole(RECORDER_ROLE, _msgSender());
    }

    /// @notice Records that `tokenId` reached `stage`, with the evidence CID and audit hash.
    function recordStage(uint256 tokenId, uint8 stage, string calldata evidenceCid, bytes32 auditHash)
        external
        onlyRole(RECORDER_ROLE)
    {
        if (stage > MAX_STAGE) revert InvalidStage(stage);
        emit StageRecorded(tokenId, stage, evidenceCid, auditHash, _msgSender());
    }
}
