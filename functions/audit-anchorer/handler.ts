import { anchoringDeps } from '../../shared/composition/ledger';
import { instrumented } from '../../shared/runtime/instrument';
import { runAnchor, type AnchorRunResult } from '../../shared/use-cases/anchoring';

/**
 * The scheduled audit-anchorer (docs/api/anchoring.md#anchoring-of-the-audit-log; every ANCHOR_INTERVAL_S, default 300 s): settles
 * the open anchor once its transaction landed, then commits the heads of every batch with audit
 * entries not yet anchored as one Merkle root through the single ledger writer.
 */
export const handler = instrumented(async (): Promise<AnchorRunResult> => runAnchor(anchoringDeps()));
