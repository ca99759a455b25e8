// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC721Receiver} from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title Coffee lending vault
/// @notice An ERC-4626 vault over a USDC-like asset (6 decimals). MFIs' deposits buy shares; the
///         vault lends against BatchTokens it holds as collateral; buyers pay purchase orders into
///         it; loans are repaid from those payments with interest, which raises the share price.
/// @dev Money moves only through OPERATOR_ROLE (the service's signer, which is also the treasury):
///      the standard ERC-4626 entry points (deposit, mint, withdraw, redeem) are refused for
///      everyone else, because shareholders are keyless sub-accounts of the service
///      (`vaultShareholder(mfiId)` off chain). `payPurchaseOrder` is open to anyone (the buyer).
///      References (deposit, loan, purchase order) are the service's ids as right-zero-padded
///      bytes32, so events name them readably.
///
///      totalAssets = USDC held − buyer payments not yet applied (escrow) + principal out on loan.
///
///      Inflation attack: OpenZeppelin 5's virtual shares and assets with a decimals offset of
///      {DECIMALS_OFFSET} (shares have 6 + 6 = 12 decimals), so a donation to the vault before (or
///      between) deposits would have to be about 10^6 times the victim's deposit to round it down
///      at all; a deposit that would still mint 0 shares is refused (ZeroShares) instead of taking
///      the depositor's USDC for nothing.
///
///      A loan unpaid long after it is due is written off (`writeOffLoan`): its principal leaves
///      loansOutstanding, so totalAssets and the share price drop by the loss; the token stays
///      with the vault as collateral.
contract LendingVault is ERC4626, AccessControl, IERC721Receiver, ReentrancyGuard {
    using SafeERC20 for IERC20;

    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");

    enum LoanStatus { NONE, ACTIVE, REPAID, CANCELLED, DEFAULTED }

    struct Loan {
        LoanStatus status;
        uint256 tokenId;
        uint256 principal;
        /// @dev Where the token came from and goes back to (the custodian).
        address holder;
    }

    /// @notice The BatchToken contract whose tokens are collateral.
    IERC721 public immutable batchToken;

    /// @notice Principal of ACTIVE loans (counted in totalAssets).
    uint256 public loansOutstanding;
    /// @notice Principal of DEFAULTED loans, written off (no longer in totalAssets).
    uint256 public loansWrittenOff;

    /// @notice Share decimals above the asset's: virtual shares against the inflation attack.
    uint8 public constant DECIMALS_OFFSET = 6;
    /// @notice Buyer payments not yet applied, over all purchase orders (not in totalAssets).
    uint256 public totalEscrow;

    mapping(bytes32 loanRef => Loan) private _loans;
    mapping(bytes32 poRef => uint256 amount) private _escrow;
    mapping(uint256 tokenId => bytes32 loanRef) private _lockedBy;
    mapping(bytes32 ref => bool) private _depositRefs;
    mapping(bytes32 ref => bool) private _reversalRefs;

    /// @notice A deposit or reversal reference was used already.
    error RefUsed(bytes32 ref);
    /// @notice The token is collateral of an active loan already.
    error TokenLocked(uint256 tokenId, bytes32 loanRef);
    /// @notice The loan reference was used already.
    error LoanExists(bytes32 loanRef);
    /// @notice The loan is not ACTIVE (unknown, repaid or cancelled).
    error LoanNotActive(bytes32 loanRef);
    /// @notice Idle USDC (held − escrow) is below what the loan needs.
    error InsufficientLiquidity(uint256 idle, uint256 needed);
    /// @notice The purchase order's unapplied payment is below the amount.
    error InsufficientEscrow(bytes32 poRef, uint256 available, uint256 needed);
    /// @notice A repayment below the loan's principal.
    error RepaymentBelowPrincipal(bytes32 loanRef, uint256 principal, uint256 amount);
    /// @notice A zero amount (or zero shares).
    error ZeroAmount();
    /// @notice A deposit of `assets` would mint 0 shares at the current share price.
    error ZeroShares(uint256 assets);
    /// @notice The standard ERC-4626 entry points are the operator's only.
    error OperatorOnly();
    /// @notice Only BatchTokens are accepted, and only through `openLoan`.
    error UnexpectedToken(address token);

    event DepositRecorded(bytes32 indexed ref, address indexed receiver, uint256 assets, uint256 shares);
    event DepositReversed(bytes32 indexed ref, address indexed owner, uint256 shares, uint256 assets);
    event LoanOpened(bytes32 indexed loanRef, uint256 indexed tokenId, uint256 principal);
    event LoanCancelled(bytes32 indexed loanRef, uint256 indexed tokenId, uint256 principal);
    event LoanRepaid(bytes32 indexed loanRef, bytes32 indexed poRef, uint256 principal, uint256 interest);
    event LoanWrittenOff(bytes32 indexed loanRef, uint256 indexed tokenId, uint256 principal);
    event PurchaseOrderPaid(bytes32 indexed poRef, address indexed payer, uint256 amount);
    event RemainderReleased(bytes32 indexed poRef, address indexed to, uint256 amount);

    constructor(IERC20 asset_, IERC721 batchToken_)
        ERC4626(asset_)
        ERC20("Coffee Trace Lending Vault Share", "ctVAULT")
    {
        batchToken = batchToken_;
        _grantRole(DEFAULT_ADMIN_ROLE, _msgSender());
        _grantRole(OPERATOR_ROLE, _msgSender());
    }

    modifier onlyOperator() {
        _checkRole(OPERATOR_ROLE);
        _;
    }

    // ------------------------------------------------------------------ figures

    /// @notice USDC held − unapplied buyer payments + principal out on loan.
    function totalAssets() public view override returns (uint256) {
        return IERC20(asset()).balanceOf(address(this)) - totalEscrow + loansOutstanding;
    }

    /// @notice USDC available to lend: held − unapplied buyer payments.
    function idleAssets() public view returns (uint256) {
        return IERC20(asset()).balanceOf(address(this)) - totalEscrow;
    }

    /// @notice A loan's status (0 NONE, 1 ACTIVE, 2 REPAID, 3 CANCELLED, 4 DEFAULTED), token id and principal.
    function loanOf(bytes32 loanRef) external view returns (LoanStatus status, uint256 tokenId, uint256 principal) {
        Loan storage loan = _loans[loanRef];
        return (loan.status, loan.tokenId, loan.principal);
    }

    /// @notice The purchase order's buyer payments not yet applied.
    function escrowOf(bytes32 poRef) external view returns (uint256) {
        return _escrow[poRef];
    }

    // ------------------------------------------------------------------ deposits

    /// @notice Pulls `assets` USDC from the operator and mints shares to `receiver` (ERC-4626
    ///         rounding). Reverts RefUsed for a reference used before, ZeroAmount for 0, ZeroShares
    ///         when the amount would mint no share.
    function depositFor(bytes32 ref, uint256 assets, address receiver) external onlyOperator nonReentrant returns (uint256 shares) {
        if (assets == 0) revert ZeroAmount();
        if (_depositRefs[ref]) revert RefUsed(ref);
        _depositRefs[ref] = true;
        shares = previewDeposit(assets);
        if (shares == 0) revert ZeroShares(assets);
        _deposit(_msgSender(), receiver, assets, shares);
        emit DepositRecorded(ref, receiver, assets, shares);
    }

    /// @notice Burns `shares` of `owner_` and sends what they are worth to the operator (an on-ramp
    ///         reversal). Reverts RefUsed for a reference reversed before, ZeroAmount for 0, the
    ///         ERC-20 balance error when `owner_` has fewer shares.
    function reverseDeposit(bytes32 ref, address owner_, uint256 shares) external onlyOperator nonReentrant returns (uint256 assets) {
        if (shares == 0) revert ZeroAmount();
        if (_reversalRefs[ref]) revert RefUsed(ref);
        _reversalRefs[ref] = true;
        assets = previewRedeem(shares);
        uint256 idle = idleAssets();
        if (idle < assets) revert InsufficientLiquidity(idle, assets);
        _burn(owner_, shares);
        IERC20(asset()).safeTransfer(_msgSender(), assets);
        emit Withdraw(_msgSender(), _msgSender(), owner_, assets, shares);
        emit DepositReversed(ref, owner_, shares, assets);
    }

    /// @dev The standard entry points: operator only (shareholders have no keys). A deposit that
    ///      would mint 0 shares reverts ZeroShares.
    function deposit(uint256 assets, address receiver) public override onlyOperatorEntry returns (uint256) {
        if (previewDeposit(assets) == 0) revert ZeroShares(assets);
        return super.deposit(assets, receiver);
    }

    /// @dev Shares have DECIMALS_OFFSET more decimals than the asset (OpenZeppelin's virtual shares).
    function _decimalsOffset() internal pure override returns (uint8) {
        return DECIMALS_OFFSET;
    }

    function mint(uint256 shares, address receiver) public override onlyOperatorEntry returns (uint256) {
        return super.mint(shares, receiver);
    }

    function withdraw(uint256 assets, address receiver, address owner_) public override onlyOperatorEntry returns (uint256) {
        return super.withdraw(assets, receiver, owner_);
    }

    function redeem(uint256 shares, address receiver, address owner_) public override onlyOperatorEntry returns (uint256) {
        return super.redeem(shares, receiver, owner_);
    }

    modifier onlyOperatorEntry() {
        if (!hasRole(OPERATOR_ROLE, _msgSender())) revert OperatorOnly();
        _;
    }

    // ------------------------------------------------------------------ loans

    /// @notice Locks BatchToken `tokenId` (taken from its holder, who must have approved the vault)
    ///         as collateral of loan `loanRef` and sends `principal` USDC to the operator.
    ///         Reverts TokenLocked, LoanExists, InsufficientLiquidity, ZeroAmount.
    function openLoan(bytes32 loanRef, uint256 tokenId, uint256 principal) external onlyOperator nonReentrant {
        if (principal == 0) revert ZeroAmount();
        bytes32 lockedBy = _lockedBy[tokenId];
        if (lockedBy != bytes32(0)) revert TokenLocked(tokenId, lockedBy);
        if (_loans[loanRef].status != LoanStatus.NONE) revert LoanExists(loanRef);
        uint256 idle = idleAssets();
        if (idle < principal) revert InsufficientLiquidity(idle, principal);
        address holder = batchToken.ownerOf(tokenId);
        _loans[loanRef] = Loan({status: LoanStatus.ACTIVE, tokenId: tokenId, principal: principal, holder: holder});
        _lockedBy[tokenId] = loanRef;
        loansOutstanding += principal;
        batchToken.safeTransferFrom(holder, address(this), tokenId);
        IERC20(asset()).safeTransfer(_msgSender(), principal);
        emit LoanOpened(loanRef, tokenId, principal);
    }

    /// @notice The disbursement was never sent: principal back from the operator, token back to
    ///         its holder, loan CANCELLED. Reverts LoanNotActive.
    function cancelLoan(bytes32 loanRef) external onlyOperator nonReentrant {
        Loan storage loan = _loans[loanRef];
        if (loan.status != LoanStatus.ACTIVE) revert LoanNotActive(loanRef);
        loan.status = LoanStatus.CANCELLED;
        loansOutstanding -= loan.principal;
        delete _lockedBy[loan.tokenId];
        IERC20(asset()).safeTransferFrom(_msgSender(), address(this), loan.principal);
        batchToken.safeTransferFrom(address(this), loan.holder, loan.tokenId);
        emit LoanCancelled(loanRef, loan.tokenId, loan.principal);
    }

    /// @notice Repays loan `loanRef` with `amount` (≥ principal; the rest is interest, which raises
    ///         the share price) of purchase order `poRef`'s payment; the token goes back to its
    ///         holder. Reverts LoanNotActive, RepaymentBelowPrincipal, InsufficientEscrow.
    function repayLoan(bytes32 loanRef, bytes32 poRef, uint256 amount) external onlyOperator nonReentrant {
        Loan storage loan = _loans[loanRef];
        if (loan.status != LoanStatus.ACTIVE) revert LoanNotActive(loanRef);
        if (amount < loan.principal) revert RepaymentBelowPrincipal(loanRef, loan.principal, amount);
        _takeEscrow(poRef, amount);
        _closeRepaid(loan, loanRef, poRef, amount);
    }

    /// @notice One repayment of `repayLoans`: the arguments of `repayLoan` but the purchase order.
    struct Repayment {
        bytes32 loanRef;
        uint256 amount;
    }

    /// @notice A repayment of `repayLoans` that was skipped; `reason` is the ABI-encoded error
    ///         `repayLoan` would have reverted with (LoanNotActive — also a loan repaid earlier in
    ///         the same call —, RepaymentBelowPrincipal, InsufficientEscrow). The others are repaid.
    event RepaymentSkipped(bytes32 indexed loanRef, bytes32 indexed poRef, bytes reason);

    /// @notice `repayLoan` for many loans of purchase order `poRef` in one transaction (the
    ///         settlement of an order of many batches): each repayment is checked and applied as
    ///         `repayLoan` would, in order, with its own LoanRepaid event; one that `repayLoan`
    ///         would refuse is skipped with RepaymentSkipped and never blocks the others. Returns
    ///         how many were repaid. Reverts only for the caller (not operator) or reentrancy.
    function repayLoans(bytes32 poRef, Repayment[] calldata repayments) external onlyOperator nonReentrant returns (uint256 repaid) {
        for (uint256 i = 0; i < repayments.length; i++) {
            Repayment calldata r = repayments[i];
            Loan storage loan = _loans[r.loanRef];
            if (loan.status != LoanStatus.ACTIVE) {
                emit RepaymentSkipped(r.loanRef, poRef, abi.encodeWithSelector(LoanNotActive.selector, r.loanRef));
                continue;
            }
            if (r.amount < loan.principal) {
                emit RepaymentSkipped(
                    r.loanRef, poRef, abi.encodeWithSelector(RepaymentBelowPrincipal.selector, r.loanRef, loan.principal, r.amount)
                );
                continue;
            }
            uint256 available = _escrow[poRef];
            if (available < r.amount) {
                emit RepaymentSkipped(r.loanRef, poRef, abi.encodeWithSelector(InsufficientEscrow.selector, poRef, available, r.amount));
                continue;
            }
            _takeEscrow(poRef, r.amount);
            _closeRepaid(loan, r.loanRef, poRef, r.amount);
            repaid++;
        }
    }

    /// @dev A checked repayment's effects: REPAID, out of loansOutstanding, the token back to its holder, LoanRepaid.
    function _closeRepaid(Loan storage loan, bytes32 loanRef, bytes32 poRef, uint256 amount) private {
        loan.status = LoanStatus.REPAID;
        loansOutstanding -= loan.principal;
        delete _lockedBy[loan.tokenId];
        batchToken.safeTransferFrom(address(this), loan.holder, loan.tokenId);
        emit LoanRepaid(loanRef, poRef, loan.principal, amount - loan.principal);
    }

    /// @notice Writes off loan `loanRef`, unpaid long past its due date: DEFAULTED, its principal
    ///         leaves loansOutstanding (so totalAssets and the share price drop by the loss) and
    ///         is added to loansWrittenOff; the token stays with the vault as collateral (still
    ///         locked). Reverts LoanNotActive (unknown, repaid, cancelled or written off already).
    function writeOffLoan(bytes32 loanRef) external onlyOperator nonReentrant {
        Loan storage loan = _loans[loanRef];
        if (loan.status != LoanStatus.ACTIVE) revert LoanNotActive(loanRef);
        loan.status = LoanStatus.DEFAULTED;
        loansOutstanding -= loan.principal;
        loansWrittenOff += loan.principal;
        emit LoanWrittenOff(loanRef, loan.tokenId, loan.principal);
    }

    // ------------------------------------------------------------------ buyer payments

    /// @notice The buyer pays `amount` USDC for purchase order `poRef` (approve the vault first).
    ///         Held apart (escrow) until the operator applies it. Reverts ZeroAmount.
    function payPurchaseOrder(bytes32 poRef, uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        _escrow[poRef] += amount;
        totalEscrow += amount;
        IERC20(asset()).safeTransferFrom(_msgSender(), address(this), amount);
        emit PurchaseOrderPaid(poRef, _msgSender(), amount);
    }

    /// @notice Sends `amount` of purchase order `poRef`'s unapplied payment to `to` (the
    ///         cooperative's share after its loans). Reverts InsufficientEscrow, ZeroAmount.
    function releaseRemainder(bytes32 poRef, address to, uint256 amount) external onlyOperator nonReentrant {
        if (amount == 0) revert ZeroAmount();
        _takeEscrow(poRef, amount);
        IERC20(asset()).safeTransfer(to, amount);
        emit RemainderReleased(poRef, to, amount);
    }

    // ------------------------------------------------------------------ refunds of unapplied buyer payments

    /// @notice Refunds already made, by refund reference (one per buyer payment).
    mapping(bytes32 refundRef => bool) private _refundRefs;

    /// @notice The refund reference was used already (a buyer payment is refunded once).
    error RefundRefUsed(bytes32 refundRef);

    /// @notice `amount` of purchase order `poRef`'s unapplied payment went back to its payer `to`.
    event PaymentRefunded(bytes32 indexed poRef, bytes32 indexed refundRef, address indexed to, uint256 amount);

    /// @notice Returns `amount` of purchase order `poRef`'s unapplied payment (escrow) to `to`, the
    ///         address that paid it (a payment from another address than the buyer, for an unknown
    ///         order or after settlement). `refundRef` names the refund, once: a second call with
    ///         it reverts RefundRefUsed. Reverts InsufficientEscrow, ZeroAmount.
    function refundPayment(bytes32 poRef, bytes32 refundRef, address to, uint256 amount) external onlyOperator nonReentrant {
        if (amount == 0) revert ZeroAmount();
        if (_refundRefs[refundRef]) revert RefundRefUsed(refundRef);
        _refundRefs[refundRef] = true;
        _takeEscrow(poRef, amount);
        IERC20(asset()).safeTransfer(to, amount);
        emit PaymentRefunded(poRef, refundRef, to, amount);
    }

    function _takeEscrow(bytes32 poRef, uint256 amount) private {
        uint256 available = _escrow[poRef];
        if (available < amount) revert InsufficientEscrow(poRef, available, amount);
        _escrow[poRef] = available - amount;
        totalEscrow -= amount;
    }

    // ------------------------------------------------------------------ ERC-721 / ERC-165

    /// @notice Accepts BatchTokens sent by the vault itself (`openLoan`); anything else reverts.
    function onERC721Received(address operator, address, uint256, bytes calldata) external view returns (bytes4) {
        if (_msgSender() != address(batchToken) || operator != address(this)) revert UnexpectedToken(_msgSender());
        return IERC721Receiver.onERC721Received.selector;
    }

    function supportsInterface(bytes4 interfaceId) public view override(AccessControl) returns (bool) {
        return interfaceId == type(IERC721Receiver).interfaceId || super.supportsInterface(interfaceId);
    }
}
