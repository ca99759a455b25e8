import { depositDeps } from '../../shared/composition/lending';
import { idempotencyStore } from '../../shared/composition/platform';
import { depositView } from '../../shared/http/deposit-views';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createMfiDepositRoute } from '../../shared/http/routes/lending';
import { withIdempotency } from '../../shared/http/idempotency';
import { createMfiDeposit } from '../../shared/use-cases/deposits';

/**
 * POST /mfi/deposits (MFI for itself, ADMIN naming `mfi_id`): 202 with the MFI_DEPOSIT payment
 * (status PROCESSING) and `Location: /payments/DEP-…`; it completes when the on-ramp's signed
 * completion webhook is confirmed and the vault deposit is mined. `Idempotency-Key` supported.
 * On-ramp unreachable: 503 PROVIDER_UNAVAILABLE, the deposit FAILED (see createMfiDeposit).
 */
export const handler = httpHandler(routeOptions(createMfiDepositRoute), async (req) =>
  withIdempotency(idempotencyStore(), 'create-mfi-deposit', req, async () => {
    const deposit = await createMfiDeposit(depositDeps(), req.caller, req.body);
    return { status: 202, body: depositView(deposit), headers: { location: `/payments/${deposit.payment_id}` } };
  }),
);
