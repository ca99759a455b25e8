import { GetCommand, paginateQuery, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DomainError } from '../../domain/errors';
import type { Loan, LoanStatus } from '../../domain/lending';
import type { LoanStore } from '../../domain/ports/lending';
import type { VaultLedgerTx } from '../../domain/records';
import { transactWithAudit, TransactionConditionError } from './audit-append';
import { ACTIVE_LOANS_BY_DUE, fromItem, keys, PENDING_LOANS } from './keys';
import { batchGetItems, itemKey } from './batch-get';
import { ledgerTxItem } from './ledger-tx';
import { documentClient, isConditionalCheckFailed, nextCounterValue, tableName } from './table';

/** Fields a loan transition may not change (keys and identity). */
const FIXED = new Set(['loan_id', 'batch_id', 'token_id', 'farmer_id', 'cooperative_id', 'status', 'created_at', 'created_by']);

/**
 * Loans (docs/api/lending.md#loans). A batch has at most one PENDING or ACTIVE loan: its guard item
 * (LOAN_GUARD#<batch>) is created in the loan's own transaction with attribute_not_exists and
 * removed when the loan is repaid or cancelled, so concurrent requests cannot both lock a token.
 * Every loan change that matters to the trail is an entry of the batch's audit log.
 */
export class LoanRepository implements LoanStore {
  /**
   * The loan (PENDING), its guard and the ledger write locking the BatchToken, with the batch's
   * LOAN_REQUESTED audit entry, in one transaction; the batch must not be SETTLED.
   * Errors: BATCH_HAS_ACTIVE_LOAN (409) when the guard exists; BATCH_NOT_ELIGIBLE (422) when the
   * batch was settled meanwhile.
   */
  async createPending(loan: Loan, lockWrite: VaultLedgerTx): Promise<void> {
    try {
      await transactWithAudit({
        batchId: loan.batch_id,
        items: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.loanGuard(loan.batch_id), entity: 'LOAN_GUARD', loan_id: loan.loan_id, created_at: loan.created_at },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...keys.loan(loan.loan_id),
                ...keys.loanGsi(loan.farmer_id, loan.created_at, loan.loan_id),
                ...keys.pendingLoanGsi(loan.created_at, loan.loan_id),
                entity: 'LOAN',
                ...loan,
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          { Put: { TableName: tableName(), Item: ledgerTxItem(lockWrite), ConditionExpression: 'attribute_not_exists(PK)' } },
        ],
        entry: {
          type: 'LOAN_REQUESTED',
          at: loan.created_at,
          actor: loan.created_by,
          payload: {
            loan_id: loan.loan_id,
            principal_usd_micro: loan.principal_usd_micro,
            collateral_value_usd_micro: loan.collateral_value_usd_micro,
            ltv_bps: loan.ltv_bps,
            apr: loan.apr,
            price_usd_micro_per_kg: loan.price_usd_micro_per_kg,
            price_updated_at: loan.price_updated_at,
            disbursement_payment_id: loan.disbursement_payment_id,
          },
        },
        batchCondition: { expression: 'attribute_exists(stage) AND stage <> :settled', values: { ':settled': 'SETTLED' } },
      });
    } catch (err) {
      if (err instanceof TransactionConditionError && err.index === 0) {
        throw new DomainError(
          'BATCH_HAS_ACTIVE_LOAN',
          `Batch ${loan.batch_id} already has an active loan: its BatchToken is locked as collateral.`,
        );
      }
      if (err instanceof TransactionConditionError && err.index === 3) {
        throw new DomainError('BATCH_NOT_ELIGIBLE', `Batch ${loan.batch_id} is settled; it cannot be lent against.`);
      }
      throw err;
    }
  }

  async nextLoanNumber(year: number): Promise<number> {
    return nextCounterValue(keys.loanCounter(year));
  }

  async get(loanId: string): Promise<Loan | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.loan(loanId), ConsistentRead: true }));
    return r.Item ? fromItem<Loan>(r.Item) : null;
  }

  /** The loans holding the guards of `batchIds`, in their order (null where none): two BatchGetItem reads. */
  async activeForBatches(batchIds: readonly string[]): Promise<Array<Loan | null>> {
    const guards = await batchGetItems(batchIds.map((b) => keys.loanGuard(b)));
    const loanIds = batchIds.map((b) => guards.get(itemKey(keys.loanGuard(b)))?.loan_id);
    const named = loanIds.filter((id): id is string => typeof id === 'string');
    const loans = named.length ? await batchGetItems(named.map((id) => keys.loan(id))) : new Map<string, Record<string, unknown>>();
    return loanIds.map((id) => {
      const item = typeof id === 'string' ? loans.get(itemKey(keys.loan(id))) : undefined;
      return item ? fromItem<Loan>(item) : null;
    });
  }

  async activeForBatch(batchId: string): Promise<Loan | null> {
    const guard = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.loanGuard(batchId), ConsistentRead: true }),
    );
    const loanId = guard.Item?.loan_id;
    return typeof loanId === 'string' ? this.get(loanId) : null;
  }

  /**
   * Conditional status change. Moving to REPAID or CANCELLED also removes the batch's guard (the
   * token is unlocked), with an audit entry (LOAN_REPAID / LOAN_CANCELLED) — one transaction.
   * DEFAULTED (written off) keeps the guard (the token stays locked in the vault), with a
   * LOAN_DEFAULTED audit entry — one transaction. ACTIVE is a plain conditional update (the
   * disbursement settled) that enters the loan in the due-date index (when it has `due_at`);
   * leaving PENDING or ACTIVE leaves their index. Returns false when the loan was not in one of `from`.
   */
  async transition(loanId: string, from: LoanStatus[], to: LoanStatus, set: Partial<Loan>, at: string): Promise<boolean> {
    const fields = Object.entries(set).filter(([k, val]) => !FIXED.has(k) && val !== undefined);
    const names: Record<string, string> = { '#s': 'status' };
    const values: Record<string, unknown> = { ':to': to, ':at': at };
    const sets = ['#s = :to', 'updated_at = :at'];
    fields.forEach(([k, val], i) => {
      names[`#f${i}`] = k;
      values[`:f${i}`] = val;
      sets.push(`#f${i} = :f${i}`);
    });
    from.forEach((s, i) => {
      values[`:from${i}`] = s;
    });
    const condition = `#s IN (${from.map((_, i) => `:from${i}`).join(', ')})`;
    // Leaving PENDING leaves the pending-loans index; ACTIVE enters the due-date index; the rest leave both.
    let indexUpdate = to === 'PENDING' ? '' : ' REMOVE GSI2PK, GSI2SK';
    if (to === 'ACTIVE') {
      // The due date is fixed at creation, so reading it first is safe; the update stays conditional on the status.
      const current = await this.get(loanId);
      if (!current || !from.includes(current.status)) return false;
      if (current.due_at) {
        const idx = keys.activeLoanDueGsi(current.due_at, loanId);
        values[':gsi2pk'] = idx.GSI2PK;
        values[':gsi2sk'] = idx.GSI2SK;
        sets.push('GSI2PK = :gsi2pk', 'GSI2SK = :gsi2sk');
        indexUpdate = '';
      }
    }
    const update = {
      TableName: tableName(),
      Key: keys.loan(loanId),
      UpdateExpression: `SET ${sets.join(', ')}${indexUpdate}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };

    if (to !== 'REPAID' && to !== 'CANCELLED' && to !== 'DEFAULTED') {
      try {
        await documentClient().send(new UpdateCommand(update));
        return true;
      } catch (err) {
        if (isConditionalCheckFailed(err)) return false;
        throw err;
      }
    }
    const loan = await this.get(loanId);
    if (!loan || !from.includes(loan.status)) return false;
    try {
      await transactWithAudit({
        batchId: loan.batch_id,
        items: [
          { Update: update },
          // A written-off loan's token stays locked in the vault: its batch keeps the guard.
          ...(to === 'DEFAULTED'
            ? []
            : [
                {
                  Delete: {
                    TableName: tableName(),
                    Key: keys.loanGuard(loan.batch_id),
                    ConditionExpression: 'loan_id = :id',
                    ExpressionAttributeValues: { ':id': loanId },
                  },
                },
              ]),
        ],
        entry: {
          type: to === 'REPAID' ? 'LOAN_REPAID' : to === 'DEFAULTED' ? 'LOAN_DEFAULTED' : 'LOAN_CANCELLED',
          at,
          actor: 'system',
          payload: { loan_id: loanId, ...Object.fromEntries(fields) },
        },
      });
      return true;
    } catch (err) {
      if (err instanceof TransactionConditionError && err.index === 0) return false;
      throw err;
    }
  }

  async pendingBefore(before: string, limit: number): Promise<Loan[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :b',
        ExpressionAttributeValues: { ':pk': PENDING_LOANS, ':b': before },
        Limit: Math.min(Math.max(1, limit), 100),
      }),
    );
    return (r.Items ?? []).map((i) => fromItem<Loan>(i));
  }

  /** ACTIVE loans due at or before `dueBy` (GSI2 ACTIVE_LOAN_DUE), earliest first, every page. */
  async activeDueBy(dueBy: string): Promise<Loan[]> {
    const out: Loan[] = [];
    const pages = paginateQuery(
      { client: documentClient(), pageSize: 100 },
      {
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :b',
        // Sort keys are `<due_at>#<loan_id>`; '$' sorts right after '#', so `<dueBy>$` bounds every key due at dueBy.
        ExpressionAttributeValues: { ':pk': ACTIVE_LOANS_BY_DUE, ':b': `${dueBy}$` },
      },
    );
    for await (const page of pages) out.push(...(page.Items ?? []).map((i) => fromItem<Loan>(i)));
    return out;
  }

  async listByFarmer(farmerId: string, limit: number): Promise<Loan[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.loansOfFarmer(farmerId) },
        ScanIndexForward: false,
        Limit: Math.min(Math.max(1, limit), 100),
      }),
    );
    return (r.Items ?? []).map((i) => fromItem<Loan>(i));
  }
}
