/**
 * The deployment area of each function: in AWS the functions of one area share a nested stack
 * (infra/stack/function-areas.ts; docs/deploy.md#what-the-stack-contains), so the main template
 * stays far under CloudFormation's 500 resources however many routes are added. Data only, read
 * from the manifest (shared/manifest.ts): a route function's area comes from the first segment of
 * its first route's path (`/v1` aside), a worker's from its kind; a new route lands in its area
 * with no infrastructure edit, and a path segment this table does not know lands in `other`.
 *
 * The authorizer has no area: API Gateway's authorizer resource and the authorizer's invoke
 * permission refer to each other, so it stays in the main stack with the API.
 *
 * An area's name is part of the construct path of its functions: renaming an area, or moving a
 * path segment to another one, replaces those functions in AWS (new names, new log groups) on the
 * next deploy; see docs/upgrading.md#upgrading-a-stack-deployed-before-the-function-areas.
 */
import type { FunctionManifest } from './manifest';

/** The areas, each a nested stack of functions in AWS. */
export const FUNCTION_AREAS = ['registry', 'batches', 'trade', 'payments', 'eudr', 'webhooks', 'reference', 'workers', 'other'] as const;

/** One deployment area. */
export type FunctionArea = (typeof FUNCTION_AREAS)[number];

/** First path segment (after an optional `/v1`) → area. */
const AREA_OF_SEGMENT: Readonly<Record<string, FunctionArea>> = {
  cooperatives: 'registry',
  farmers: 'registry',
  batch: 'batches',
  jobs: 'batches',
  ipfs: 'batches',
  trace: 'batches',
  'purchase-orders': 'trade',
  loans: 'trade',
  mfi: 'trade',
  payments: 'payments',
  eudr: 'eudr',
  webhooks: 'webhooks',
  api: 'webhooks', // /api/webhooks/…: the inbound webhooks
  'openapi.json': 'reference',
  docs: 'reference',
};

/**
 * The area of a function of the manifest: routes by their first route's first path segment
 * (`other` when the table does not know it), every worker `workers`, the authorizer `undefined`
 * (it stays in the main stack, see the file comment).
 */
export function functionArea(m: Pick<FunctionManifest, 'kind' | 'routes'>): FunctionArea | undefined {
  if (m.kind === 'authorizer') return undefined;
  if (m.kind !== 'route') return 'workers';
  const segment = (m.routes[0]?.path ?? '').replace(/^\/v1(?=\/)/, '').split('/')[1] ?? '';
  return AREA_OF_SEGMENT[segment] ?? 'other';
}
