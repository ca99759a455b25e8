import { DdsRepository } from '../adapters/dynamodb/dds-repo';
import type { DdsOfBatchReader } from '../domain/ports/eudr';
import type { TracePageDeps } from '../use-cases/trace-page';
import { auditDeps } from './audit';
import { batchRepo, registryRepo } from './repos';

let dds: DdsOfBatchReader | undefined;

/** Ports of the public trace page: the table, the ledger (read only) and the evidence copy, as the audit endpoint reads them. */
export function tracePageDeps(): TracePageDeps {
  return { ...auditDeps(), batches: batchRepo(), registry: registryRepo(), dds: (dds ??= new DdsRepository()) };
}
