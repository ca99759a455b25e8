// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

/// @title Test USD Coin
/// @notice A USDC-like ERC-20 (6 decimals) for the local chain only: the lending vault's asset
///         there. MINTER_ROLE mints (the on-ramp sandbox delivers USDC by minting; the local stack
///         mints a float to the dev buyer). In AWS the vault's asset is a real USDC contract.
contract TestUSDC is ERC20, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    constructor() ERC20("Test USD Coin", "USDC") {
        _grantRole(DEFAULT_ADMIN_ROLE, _msgSender());
        _grantRole(MINTER_ROLE, _msgSender());
    }

    /// @notice 6, like USDC: amounts are micro-USDC.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` micro-USDC to `to`. Reverts when the caller lacks MINTER_ROLE.
    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
        _mint(to, amount);
    }
}
