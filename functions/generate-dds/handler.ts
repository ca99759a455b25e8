import { ddsDeps } from '../../shared/composition/eudr';
import { errorResponse } from '../../shared/http/envelope';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { generateDdsRoute } from '../../shared/http/routes/eudr';
import { ddsView } from '../../shared/http/views';
import { generateDds } from '../../shared/use-cases/eudr';
import { generatePurchaseOrderDds } from '../../shared/use-cases/eudr-shipment';

/**
 * POST /eudr/generate-dds `{batch_id}` or `{purchase_order_id}` (docs/api/eudr.md#due-diligence-statements,
 * docs/api/eudr.md#statement-per-purchase-order): builds the statement of a batch or of a shipment
 * (JSON and SubmitDdsRequest XML), keeps it privately (never on the public /ipfs route nor pinned)
 * and queues the filing. The usual answer is 202 with the envelope code DDS_TRACES_PENDING plus
 * `dds_id` and `status` beside `error`; once the statement is AVAILABLE a repeated request answers 200 with it.
 */
export const handler = httpHandler(routeOptions(generateDdsRoute), async ({ body, caller, requestId }) => {
  const { dds } =
    'purchase_order_id' in body ? await generatePurchaseOrderDds(ddsDeps(), caller, body) : await generateDds(ddsDeps(), caller, body);
  if (dds.status === 'PENDING_FILING' || dds.status === 'SUBMITTED') {
    return errorResponse(
      'DDS_TRACES_PENDING',
      `Due diligence statement ${dds.dds_id} generated; filing with the EU Information System is queued; poll GET /eudr/dds/${dds.dds_id} for the reference and verification numbers.`,
      requestId,
      {
        extra: { dds_id: dds.dds_id, status: dds.status },
        headers: { location: `/eudr/dds/${dds.dds_id}` },
      },
    );
  }
  return { status: 200, body: ddsView(dds) };
});
