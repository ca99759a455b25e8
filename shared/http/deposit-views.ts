import type { Deposit } from '../domain/lending';
import { microShares, sharePriceUsdc } from '../domain/loan-terms';
import { microToUsdc } from '../domain/money';
import type { VaultSummary } from '../use-cases/deposits';
import type { DepositViewSchema, VaultViewSchema, View } from './view-schemas';

/**
 * GET /payments/DEP-… and the 202 of POST /mfi/deposits (docs/api/payouts.md#payment-records): the
 * common fields and the MFI_DEPOSIT fields. `amount_usdc` is what the on-ramp delivered (0 until
 * it completes); `vault_shares_issued` is an integer of micro-shares (10^-6 share; on chain a
 * share has 12 decimals, so the chain's figure is this × 10^6, see `microShares`).
 */
export function depositView(d: Deposit): View<typeof DepositViewSchema> {
  return {
    payment_id: d.payment_id,
    payment_type: d.payment_type,
    status: d.status,
    amount_usdc: microToUsdc(d.amount_usd_micro),
    created_at: d.created_at,
    completed_at: d.completed_at ?? null,
    updated_at: d.updated_at,
    mfi_id: d.mfi_id,
    source_currency: d.source_currency,
    source_amount: d.source_amount,
    ramp_payment_id: d.ramp_payment_id ?? null,
    chain_tx_hash: d.chain_tx_hash ?? null,
    vault_shares_issued: d.vault_shares_issued === undefined ? null : microShares(BigInt(d.vault_shares_issued)),
    refund_tx_hash: d.refund_tx_hash ?? null,
    refunded_at: d.refunded_at ?? null,
    failure_reason: d.failure_reason ?? null,
  };
}

const usdc = (micro: bigint) => microToUsdc(Number(micro));

/**
 * GET /mfi/vault: USDC figures as numbers (6 decimals), shares as integers of micro-shares
 * (10^-6 share), `share_price_usdc` = USDC per whole share (total assets / total shares; 1 for an
 * empty vault), `utilisation` = loans outstanding / total assets (0 for an empty vault, 4
 * decimals), `apr` the annual rate, `par30_usdc` the principal of loans 30+ days past due,
 * `defaults_usdc` the principal written off (DEFAULTED loans).
 */
export function vaultView(s: VaultSummary): View<typeof VaultViewSchema> {
  const { total_assets_usd_micro: assets, total_shares: shares, loans_outstanding_usd_micro: loans } = s.state;
  return {
    total_assets_usdc: usdc(assets),
    total_shares: microShares(shares),
    share_price_usdc: sharePriceUsdc(assets, shares),
    loans_outstanding_usdc: usdc(loans),
    utilisation: assets === 0n ? 0 : Number((loans * 10_000n) / assets) / 10_000,
    apr: Number(s.apr),
    par30_usdc: microToUsdc(s.par30_usd_micro),
    defaults_usdc: usdc(s.state.loans_written_off_usd_micro),
    ...(s.position ? { shares: microShares(s.position.shares), value_usdc: usdc(s.position.value_usd_micro) } : {}),
  };
}
