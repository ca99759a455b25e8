import { batchDeps } from '../../shared/composition/batches';
import { idempotencyStore } from '../../shared/composition/platform';
import { envOr } from '../../shared/config';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { submitBatchRoute } from '../../shared/http/routes/batches';
import { withIdempotency } from '../../shared/http/idempotency';
import { prefersRespondAsync, RESPOND_ASYNC_APPLIED } from '../../shared/http/prefer';
import { submissionView } from '../../shared/http/views';
import { assertMaySubmitBatch, submitBatch } from '../../shared/use-cases/batches';

/** How long the submission waits for the mint receipt before answering 202 (docs/api/conventions.md#http-and-errors). */
const RECEIPT_WAIT_MS = Number(envOr('SUBMIT_RECEIPT_WAIT_MS', '4000'));

/**
 * POST /batch/submit and /v1/batch/submit: mint the BatchToken, write the audit log, start the
 * farmer payout. 201 with the spec's `{success, data}`; 202 `{job_id, status: PENDING}` when the
 * receipt is slow or the request carries `Prefer: respond-async` (RFC 7240). An `Idempotency-Key`
 * header makes a retried submission return the first one's answer instead of a second batch.
 */
export const handler = httpHandler(
  routeOptions(submitBatchRoute, {
    issueCodes: [
      { path: 'weight_kg', types: ['min_value', 'max_value'], code: 'WEIGHT_OUT_OF_RANGE' },
      { path: 'grade', types: ['picklist'], code: 'INVALID_GRADE' },
    ],
  }),
  async (req) => {
    assertMaySubmitBatch(req.caller, req.body);
    return withIdempotency(idempotencyStore(), 'submit-batch', req, async () => {
      const { body, caller, headers } = req;
      const respondAsync = prefersRespondAsync(headers);
      const result = await submitBatch(batchDeps(), caller, body, { respondAsync, receiptWaitMs: RECEIPT_WAIT_MS });
      if (result.kind === 'accepted') {
        return {
          status: 202,
          // A submission's job always names its batch.
          body: { job_id: result.job.job_id, status: result.job.status, batch_id: result.job.batch_id! },
          headers: { location: `/jobs/${result.job.job_id}`, ...(respondAsync ? RESPOND_ASYNC_APPLIED : {}) },
        };
      }
      return { status: 201, body: submissionView(result), headers: { location: `/batch/${result.batch.batch_id}` } };
    });
  },
);
