import { AuditAnchorRepository } from '../adapters/dynamodb/anchor-repo';
import { auditAnchorLookupFromEnv } from '../adapters/ledger/anchor-reader';
import type { AnchoredRootLookup } from '../domain/ports/audit';
import { anchorWriteOutcomes, type AnchorWriteOutcomes } from '../use-cases/anchor-settlement';
import type { AnchoringDeps } from '../use-cases/anchoring';
import { ledgerWriteQueue } from './queues';
import { custodyRepo, now } from './repos';

let repo: AuditAnchorRepository | undefined;

/** The periodic anchors in the single table (docs/api/anchoring.md#anchoring-of-the-audit-log). */
function auditAnchorRepo(): AuditAnchorRepository {
  return (repo ??= new AuditAnchorRepository());
}

/** Ports of the scheduled audit-anchorer: the anchors, the ledger writes and the single writer's queue. */
export function anchoringDeps(): AnchoringDeps {
  return { anchors: auditAnchorRepo(), custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now };
}

let lookup: AnchoredRootLookup | undefined;

/** AuditAnchor read back (`anchoredAtBlock` and the event that set it), built on first use from the environment. */
function anchoredRoot(root: `0x${string}`): ReturnType<AnchoredRootLookup> {
  lookup ??= auditAnchorLookupFromEnv();
  return lookup(root);
}

/** What the single ledger writer calls when an anchor transaction is mined, its root found on chain already, or refused. */
export function anchorOutcomes(): AnchorWriteOutcomes {
  return anchorWriteOutcomes({ anchors: auditAnchorRepo(), now, anchoredRoot });
}
