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

    /// @notice A record of `recordStages` that was skipped; `reason` is the ABI-encoded error
    ///         `recordStage` would have reverted with (`InvalidStage(stage)`). The others are recorded.
    event StageSkipped(uint256 indexed tokenId, uint8 stage, bytes reason);

    /// @notice One record of `recordStages`: the arguments of `recordStage`.
    struct StageRecord {
        uint256 tokenId;
        uint8 stage;
        string evidenceCid;
        bytes32 auditHash;
    }

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

    /// @notice Records every record of `records` in one transaction, each exactly as `recordStage`
    ///         would (its own `StageRecorded` event, in order). A record with a stage code above
    ///         MAX_STAGE is skipped with `StageSkipped` and never reverts the others. Reverts as a
    ///         whole only when the caller lacks RECORDER_ROLE.
    /// @return recorded The number of records recorded.
    function recordStages(StageRecord[] calldata records) external onlyRole(RECORDER_ROLE) returns (uint256 recorded) {
        address recorder = _msgSender();
        for (uint256 i = 0; i < records.length; i++) {
            StageRecord calldata r = records[i];
            if (r.stage > MAX_STAGE) {
                emit StageSkipped(r.tokenId, r.stage, abi.encodeWithSelector(InvalidStage.selector, r.stage));
                continue;
            }
            emit StageRecorded(r.tokenId, r.stage, r.evidenceCid, r.auditHash, recorder);
            recorded++;
        }
    }
}
