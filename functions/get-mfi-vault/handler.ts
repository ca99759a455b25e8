import { mfiVaultDeps } from '../../shared/composition/lending';
import { vaultView } from '../../shared/http/deposit-views';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getMfiVaultRoute } from '../../shared/http/routes/lending';
import { readVault } from '../../shared/use-cases/deposits';

/**
 * GET /mfi/vault (MFI, ADMIN): `{total_assets_usdc, total_shares, share_price_usdc,
 * loans_outstanding_usdc, utilisation, apr}` from the lending vault on the ledger, plus the MFI's
 * own `{shares, value_usdc}` for an MFI token. 503 LEDGER_UNAVAILABLE when the ledger cannot be read.
 */
export const handler = httpHandler(routeOptions(getMfiVaultRoute), async ({ caller }) => ({
  status: 200,
  body: vaultView(await readVault(mfiVaultDeps(), caller)),
}));
