import { custodyDeps, uploadedPhotoDeps } from '../../shared/composition/batches';
import { envOr } from '../../shared/config';
import { CALLER_STAGES, type CallerStage } from '../../shared/domain/custody';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { prefersRespondAsync, RESPOND_ASYNC_APPLIED } from '../../shared/http/prefer';
import { updateBatchStageRoute } from '../../shared/http/routes/batches';
import { STAGE_UPDATE_ISSUE_CODES } from '../../shared/http/schemas';
import { stageUpdateView } from '../../shared/http/views';
import { assertMaySetStage } from '../../shared/use-cases/custody';
import { changeStageWithEvidence } from '../../shared/use-cases/evidence-uploads';

/** How long the stage update waits for its trace-log transaction before answering 202. */
const LEDGER_WAIT_MS = Number(envOr('STAGE_LEDGER_WAIT_MS', '4000'));

/**
 * PATCH /batch/{batch_id}/stage: 200 with the stage-update response once the trace-log
 * transaction is mined; 202 `{job_id, status: PENDING, …}` when the ledger is slow or unreachable,
 * or at once when the request carries `Prefer: respond-async` (RFC 7240; `Preference-Applied` in the
 * answer). The stage change is committed either way; the job completes when the transaction lands. The duty of the
 * requested stage is checked before the evidence (403 before 400, docs/api/conventions.md#http-and-errors). The photo comes
 * inline (`evidence_photo_base64`) or by upload (`evidence_upload_id`, docs/api/evidence.md#evidence-photos-by-upload-url), not both.
 */
export const handler = httpHandler(
  routeOptions(updateBatchStageRoute, {
    issueCodes: STAGE_UPDATE_ISSUE_CODES,
    authorize: (caller, json) => {
      const stage = (json as { new_stage?: unknown } | null)?.new_stage;
      if ((CALLER_STAGES as readonly unknown[]).includes(stage)) assertMaySetStage(caller, stage as CallerStage);
    },
  }),
  async ({ body, caller, params, headers }) => {
    const respondAsync = prefersRespondAsync(headers);
    const result = await changeStageWithEvidence({ ...custodyDeps(), uploaded: uploadedPhotoDeps() }, caller, params.id ?? '', body, {
      waitMs: respondAsync ? 0 : LEDGER_WAIT_MS,
    });
    const view = stageUpdateView(result.change);
    if (result.kind === 'accepted') {
      return {
        status: 202,
        body: { job_id: result.job.job_id, status: result.job.status, ...view },
        headers: { location: `/jobs/${result.job.job_id}`, ...(respondAsync ? RESPOND_ASYNC_APPLIED : {}) },
      };
    }
    return { status: 200, body: view };
  },
);
