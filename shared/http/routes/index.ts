import * as cooperatives from './cooperatives';
import * as farmers from './farmers';
import * as batches from './batches';
import * as purchase_orders from './purchase-orders';
import * as jobs from './jobs';
import * as payments from './payments';
import * as lending from './lending';
import * as inbound_webhooks from './inbound-webhooks';
import * as eudr from './eudr';
import * as outbound_webhooks from './outbound-webhooks';
import * as reference from './reference';
import * as docs from './docs';
import type { AnyRouteDefinition } from './define';

/**
 * Every HTTP route of the service, each defined once in its area's file. The order is the order of
 * the OpenAPI document's paths and of the manifest's routes.
 */
export const ROUTES: readonly AnyRouteDefinition[] = [
  cooperatives.createCooperativeRoute,
  cooperatives.updateCooperativeRoute,
  cooperatives.getCooperativeRoute,
  cooperatives.getHoldingBalanceRoute,
  farmers.registerFarmerRoute,
  farmers.getFarmerRoute,
  farmers.updateFarmerRoute,
  farmers.replaceFarmerFarmRoute,
  farmers.getCreditScoreRoute,
  batches.submitBatchRoute,
  batches.submitBatchV1Route,
  batches.updateBatchStageRoute,
  batches.createEvidenceUploadRoute,
  batches.getBatchAuditRoute,
  purchase_orders.createPurchaseOrderRoute,
  purchase_orders.confirmPurchaseOrderRoute,
  purchase_orders.getPurchaseOrderRoute,
  batches.getBatchRoute,
  jobs.getJobRoute,
  payments.createFarmerPayoutRoute,
  payments.getFarmerPayoutRoute,
  payments.resolveFarmerPayoutRoute,
  payments.getPaymentRoute,
  payments.listPaymentsRoute,
  lending.createLoanRoute,
  lending.getLoanRoute,
  batches.getBatchLoanRoute,
  lending.createMfiDepositRoute,
  lending.getMfiVaultRoute,
  inbound_webhooks.onrampWebhookRoute,
  inbound_webhooks.payoutProviderWebhookRoute,
  inbound_webhooks.pawaPayCallbackRoute,
  eudr.verifyGfwRoute,
  cooperatives.listFlaggedFarmsRoute,
  eudr.generateDdsRoute,
  eudr.getDdsRoute,
  eudr.getDdsXmlRoute,
  eudr.getDdsEvidenceRoute,
  eudr.amendDdsRoute,
  eudr.withdrawDdsRoute,
  inbound_webhooks.chainEventsWebhookRoute,
  purchase_orders.getSettlementRoute,
  purchase_orders.settlePurchaseOrderRoute,
  purchase_orders.refundBuyerPaymentRoute,
  outbound_webhooks.createWebhookEndpointRoute,
  outbound_webhooks.listWebhookEndpointsRoute,
  outbound_webhooks.deleteWebhookEndpointRoute,
  outbound_webhooks.rotateWebhookSecretRoute,
  outbound_webhooks.listWebhookDeliveriesRoute,
  outbound_webhooks.replayWebhookDeliveryRoute,
  reference.getIpfsRoute,
  reference.getIpfsNameRoute,
  reference.getTraceRoute,
  reference.getTraceQrSvgRoute,
  reference.getOpenapiRoute,
  docs.getDocsRoute,
  docs.getDocsErrorsRoute,
  docs.getDocsScalarJsRoute,
];
