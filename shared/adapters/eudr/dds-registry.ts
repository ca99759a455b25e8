/**
 * Port for filing due diligence statements with the EU Information System (decisions §9).
 * Filing returns only the DDS identifier (a UUID); the reference and verification numbers are
 * assigned later and read through `status`.
 *
 * Implementations: `SoapDdsRegistry` (./soap-dds-registry.ts, the DDS service V3 over SOAP 1.1 with
 * a WS-Security username token), which also talks to the local sandbox
 * (`infra/local/dds-registry-sandbox.ts`).
 */

export type { DdsRegistry, DdsRegistryStatus, DdsRegistryStatusInfo } from '../../domain/ports';
export { DdsRegistryRejectedError, DdsRegistryUnavailableError, type DdsRegistryFaultError } from '../../domain/errors';
