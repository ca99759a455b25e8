/**
 * The route table now lives in the service manifest (shared/manifest.ts), with the workers, the
 * authorizer and the environment each Need provides. This module re-exports it under the old
 * names for existing importers.
 */
export {
  AUTHORIZER_FN,
  MIB,
  routes,
  workers,
  type HttpMethod,
  type Need,
  type QueueName,
  type RouteAuth,
  type RouteDef,
  type WorkerDef,
} from '../manifest';
