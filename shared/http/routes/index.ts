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
import type { AnyRouteDefinition } from './define';

/**
 * Every HTTP route of the service, each defined once in its area's file. The order is the order of
 * the OpenAPI document's paths and of the manifest's routes.
 */
export const ROUTES: readonly AnyRouteDefinition[] = [
  cooperatives.createCooperative,
  cooperatives.updateCooperative,
  cooperatives.getCooperative,
  cooperatives.getHoldingBalance,
  farmers.registerFarmer,
  farmers.getFarmer,
  farmers.updateFarmer,
  farmers.getCreditScore,
  batches.submitBatch,
  batches.submitBatchV1,
  batches.updateBatchStage,
  batches.createEvidenceUpload,
  batches.getBatchAudit,
  purchase_orders.createPurchaseOrder,
  purchase_orders.confirmPurchaseOrder,
  batches.getBatch,
  jobs.getJob,
  payments.createFarmerPayout,
  payments.getFarmerPayout,
  payments.resolveFarmerPayout,
  payments.getPayment,
  payments.listPayments,
  lending.createLoan,
  lending.getLoan,
  batches.getBatchLoan,
  lending.createMfiDeposit,
  lending.getMfiVault,
  inbound_webhooks.onrampWebhook,
  inbound_webhooks.payoutProviderWebhook,
  eudr.verifyGfw,
  cooperatives.listFlaggedFarms,
  eudr.generateDds,
  eudr.getDds,
  eudr.getDdsXml,
  eudr.getDdsEvidence,
  inbound_webhooks.chainEventsWebhook,
  purchase_orders.getSettlement,
  purchase_orders.settlePurchaseOrder,
  purchase_orders.refundBuyerPayment,
  outbound_webhooks.createWebhookEndpoint,
  outbound_webhooks.listWebhookEndpoints,
  outbound_webhooks.deleteWebhookEndpoint,
  outbound_webhooks.rotateWebhookSecret,
  outbound_webhooks.listWebhookDeliveries,
  outbound_webhooks.replayWebhookDelivery,
  reference.getIpfs,
  reference.getIpfsName,
  reference.getTrace,
  reference.getTraceQrSvg,
  reference.getOpenapi,
  reference.getDocs,
  reference.getDocsErrors,
  reference.getDocsScalarJs,
];
