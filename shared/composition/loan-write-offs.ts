import type { LoanStore, VaultWriteQueue } from '../domain/ports/lending';
import { vaultWriteQueue } from '../use-cases/vault-writes';
import { ledgerWriteQueue } from './queues';
import { loanRepo, now, vaultWriteRepo } from './repos';

/**
 * Ports of the scheduled write-off of defaulted loans (ledger-write-reconciler): the loans by due date
 * and vault writes for the single ledger writer (table, LEDGER_WRITE_QUEUE_URL).
 */
export function loanWriteOffDeps(): { loans: Pick<LoanStore, 'activeDueBy'>; vaultWrites: VaultWriteQueue; now: () => Date } {
  return { loans: loanRepo(), vaultWrites: vaultWriteQueue(vaultWriteRepo(), ledgerWriteQueue()), now };
}
