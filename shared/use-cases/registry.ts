import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError, NationalRegistryUnavailableError } from '../domain/errors';
import { checkFarmGeolocation, type FarmLocation } from '../domain/farm-geometry';
import { newJobId } from '../domain/ids';
import { normaliseUgandanMobile } from '../domain/phone';
import type { ForestCheck, NationalFarmerRegistry, PendingNationalCheck, RegistryStore } from '../domain/ports/registry';
import type { Cooperative, Farmer, Job } from '../domain/records';
import { logger } from '../runtime/logger';

/** POST /cooperatives input, validated by the transport (CreateCooperativeSchema): the cooperative without its timestamps. */
export type CreateCooperativeInput = Omit<Cooperative, 'created_at' | 'updated_at'>;

/** PATCH /cooperatives/{id} input: the fields to change (at least one). */
export type UpdateCooperativeInput = Partial<Omit<CreateCooperativeInput, 'cooperative_id'>>;

/** POST /farmers/register input, validated by the transport (RegisterFarmerSchema). */
export interface RegisterFarmerInput {
  farmer_id: string;
  full_name: string;
  cooperative_id: string;
  /** E.164 `+256…`. */
  phone?: string;
  district: string;
  farm: FarmLocation;
}

/**
 * Cooperatives and farmers (docs/api/registries.md#cooperatives-farmers-and-the-forest-check).
 */

/**
 * POST /cooperatives (ADMIN). 1. normalise the manager phone 2. store with the id unique.
 * Errors: VALIDATION_ERROR, COOPERATIVE_ALREADY_EXISTS (409).
 */
export async function createCooperative(
  repo: Pick<RegistryStore, 'createCooperative'>,
  input: CreateCooperativeInput,
  now: Date,
): Promise<Cooperative> {
  const phone = normaliseUgandanMobile(input.manager.phone);
  if (!phone)
    throw new DomainError('VALIDATION_ERROR', 'manager.phone is not a valid Ugandan mobile number.', {
      details: [{ path: 'manager.phone', message: 'not a valid Ugandan mobile number' }],
    });
  const at = now.toISOString();
  const coop: Cooperative = { ...input, manager: { ...input.manager, phone }, created_at: at, updated_at: at };
  await repo.createCooperative(coop);
  return coop;
}

/** PATCH /cooperatives/{id} (ADMIN). Errors: VALIDATION_ERROR, COOPERATIVE_NOT_FOUND (404). */
export async function updateCooperative(
  repo: Pick<RegistryStore, 'updateCooperative'>,
  id: string,
  patch: UpdateCooperativeInput,
  now: Date,
): Promise<Cooperative> {
  if (patch.manager) {
    const phone = normaliseUgandanMobile(patch.manager.phone);
    if (!phone)
      throw new DomainError('VALIDATION_ERROR', 'manager.phone is not a valid Ugandan mobile number.', {
        details: [{ path: 'manager.phone', message: 'not a valid Ugandan mobile number' }],
      });
    patch = { ...patch, manager: { ...patch.manager, phone } };
  }
  return repo.updateCooperative(id, { ...patch, updated_at: now.toISOString() });
}

/** GET /cooperatives/{id}. Errors: INSUFFICIENT_PERMISSIONS (403), COOPERATIVE_NOT_FOUND (404). */
export async function getCooperative(repo: Pick<RegistryStore, 'getCooperative'>, caller: Caller, id: string): Promise<Cooperative> {
  assertActsFor(caller, id);
  const c = await repo.getCooperative(id);
  if (!c) throw new DomainError('COOPERATIVE_NOT_FOUND', `Cooperative ${id} is not registered.`);
  return c;
}

/**
 * POST /farmers/register. Steps: 1. cooperative binding 2. the cooperative exists 3. phone is a
 * Ugandan mobile 4. farm geolocation rules (docs/api/eudr.md#farm-geolocation: a polygon above 4 ha, valid, its
 * geodesic area recorded) 5. forest check of the farm (recorded as gfw_status; a FLAGGED farm is
 * logged for manual review; PENDING when the forest service is unavailable) 6. the national farmer
 * registry (MAAIF) knows the ID; when it does not answer, the farmer is stored PENDING with a job
 * that completes when it does (the caller gets 202 MAAIF_API_UNAVAILABLE; the store lists the
 * registration for `settlePendingNationalChecks`) 7. store, id unique.
 * Errors: INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR, COOPERATIVE_NOT_FOUND, FARMER_ALREADY_REGISTERED.
 */
export async function registerFarmer(
  deps: { registry: Pick<RegistryStore, 'getCooperative' | 'createFarmer'>; forestCheck: ForestCheck; national: NationalFarmerRegistry },
  caller: Caller,
  input: RegisterFarmerInput,
  now: Date,
): Promise<{ farmer: Farmer; job?: Job }> {
  const { computed_area_ha } = checkFarmGeolocation(input.farm); // a body rule: before the binding check
  assertActsFor(caller, input.cooperative_id);
  const coop = await deps.registry.getCooperative(input.cooperative_id);
  if (!coop) throw new DomainError('COOPERATIVE_NOT_FOUND', `Cooperative ${input.cooperative_id} is not registered.`);
  let phone: string | undefined;
  if (input.phone !== undefined) {
    phone = normaliseUgandanMobile(input.phone) ?? undefined;
    if (!phone)
      throw new DomainError('VALIDATION_ERROR', 'phone is not a valid Ugandan mobile number.', {
        details: [{ path: 'phone', message: 'not a valid Ugandan mobile number (+2567…)' }],
      });
  }
  // The national farmer registry (MAAIF) knows the ID, or the registration completes when it answers.
  let national: Farmer['national_registry_status'] = 'VERIFIED';
  try {
    const found = await deps.national.lookup(input.farmer_id);
    if (!found.found) {
      throw new DomainError(
        'VALIDATION_ERROR',
        `Farmer ID ${input.farmer_id} is not an active farmer in the national farmer registry (MAAIF).`,
        { details: [{ path: 'farmer_id', message: 'not in the national farmer registry' }] },
      );
    }
  } catch (err) {
    if (!(err instanceof NationalRegistryUnavailableError)) throw err;
    national = 'PENDING';
    logger.warn('national farmer registry unavailable; registration completes later', { farmer_id: input.farmer_id });
  }
  // The forest check is recorded with the farm; when the forest service does not answer, the farm
  // is registered PENDING and POST /eudr/verify-gfw checks it again.
  let check: Awaited<ReturnType<ForestCheck['check']>> | null = null;
  try {
    check = await deps.forestCheck.check(input.farm);
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'GFW_API_UNAVAILABLE')) throw err;
    logger.warn('forest service unavailable at registration; farm recorded PENDING', { farmer_id: input.farmer_id });
  }
  const farmer: Farmer = {
    farmer_id: input.farmer_id,
    full_name: input.full_name,
    cooperative_id: input.cooperative_id,
    ...(phone ? { phone } : {}),
    district: input.district,
    farm: { ...input.farm, ...(input.farm.polygon ? { computed_area_ha } : {}) },
    gfw_status: check?.status ?? 'PENDING',
    national_registry_status: national,
    ...(check ? { gfw_checked_at: check.checked_at, gfw_dataset: check.dataset } : {}),
    registered_at: now.toISOString(),
    registered_by: caller.sub,
  };
  const job: Job | undefined =
    national === 'PENDING'
      ? {
          job_id: newJobId(),
          type: 'FARMER_REGISTRATION',
          status: 'PENDING',
          cooperative_id: farmer.cooperative_id,
          farmer_id: farmer.farmer_id,
          created_at: now.toISOString(),
        }
      : undefined;
  await deps.registry.createFarmer(farmer, job);
  if (check?.status === 'FLAGGED') {
    logger.warn('farm flagged by the forest check: manual review required', {
      farmer_id: farmer.farmer_id,
      cooperative_id: farmer.cooperative_id,
      alerts: check!.alerts.length,
    });
  }
  return { farmer, ...(job ? { job } : {}) };
}

/** What one run of `settlePendingNationalChecks` did. */
export interface NationalCheckReport {
  /** Pending registrations looked up. */
  examined: number;
  /** Found in the registry: farmer VERIFIED, job COMPLETE. */
  verified: number;
  /** Not an active farmer there: farmer REJECTED, job FAILED. */
  rejected: number;
  /** The registry did not answer: left pending for the next run. */
  stillPending: number;
  /** Not looked up this run because the registry kept not answering. */
  skipped: number;
  /** Any other error (logged): left pending for the next run. */
  failed: number;
}

/** Registrations looked at per run. */
const NATIONAL_CHECKS_PER_RUN = 50;
/** Consecutive unanswered look-ups after which a run stops asking (the registry is down). */
const UNANSWERED_BEFORE_STOP = 3;

/**
 * Scheduled sweep: completes registrations the national farmer registry could not confirm at the
 * time, oldest first (up to `limit`, default 50). Found → the farmer is VERIFIED and the job
 * COMPLETE; not found → REJECTED and the job FAILED (each in one transaction that also takes the
 * registration off the pending list). Registry still unavailable → stays pending for the next run;
 * after 3 unanswered look-ups in a row the run stops asking. Any other failure is logged and the
 * sweep goes on with the next registration.
 */
export async function settlePendingNationalChecks(
  deps: {
    registry: Pick<RegistryStore, 'pendingNationalChecks' | 'settleNationalCheck'>;
    national: NationalFarmerRegistry;
    now: () => Date;
  },
  opts: { limit?: number } = {},
): Promise<NationalCheckReport> {
  const report: NationalCheckReport = { examined: 0, verified: 0, rejected: 0, stillPending: 0, skipped: 0, failed: 0 };
  const pending = await deps.registry.pendingNationalChecks(opts.limit ?? NATIONAL_CHECKS_PER_RUN);
  let unanswered = 0;
  for (const [i, check] of pending.entries()) {
    if (unanswered >= UNANSWERED_BEFORE_STOP) {
      report.skipped = pending.length - i;
      logger.warn('national farmer registry not answering; the remaining registrations wait for the next run', { skipped: report.skipped });
      break;
    }
    report.examined++;
    try {
      const outcome = await settleNationalCheck(deps, check);
      unanswered = 0;
      if (outcome === 'VERIFIED') report.verified++;
      else report.rejected++;
    } catch (err) {
      if (err instanceof NationalRegistryUnavailableError) {
        unanswered++;
        report.stillPending++;
        logger.warn('national farmer registry still unavailable; the registration stays pending', {
          farmer_id: check.farmer_id,
          job_id: check.job_id,
          registered_at: check.registered_at,
        });
      } else {
        report.failed++;
        logger.error('national registry check failed; the next run tries again', {
          farmer_id: check.farmer_id,
          job_id: check.job_id,
          error: err as Error,
        });
      }
    }
  }
  if (pending.length) logger.info('national registry checks', { ...report });
  return report;
}

/** Looks one pending registration up and records the answer. Errors: NationalRegistryUnavailableError. */
async function settleNationalCheck(
  deps: { registry: Pick<RegistryStore, 'settleNationalCheck'>; national: NationalFarmerRegistry; now: () => Date },
  check: PendingNationalCheck,
): Promise<'VERIFIED' | 'REJECTED'> {
  const found = await deps.national.lookup(check.farmer_id);
  const outcome = found.found ? 'VERIFIED' : 'REJECTED';
  await deps.registry.settleNationalCheck(check.farmer_id, check.job_id, outcome, deps.now().toISOString());
  return outcome;
}

/** GET /farmers/{id}: ADMIN, MFI, or COOPERATIVE/AGENT of the farmer's cooperative. */
export async function getFarmer(repo: Pick<RegistryStore, 'getFarmer'>, caller: Caller, id: string): Promise<Farmer> {
  const f = await repo.getFarmer(id);
  if (!f) {
    throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${id} is not in the farmer registry.`);
  }
  if (caller.role !== 'MFI') assertActsFor(caller, f.cooperative_id);
  return f;
}

/**
 * GET /cooperatives/{id}/holding-balance: USDC (micro) held for the cooperative from payouts in
 * manual review. Errors: INSUFFICIENT_PERMISSIONS (403), COOPERATIVE_NOT_FOUND (404).
 */
export async function readHoldingBalance(repo: Pick<RegistryStore, 'getCooperative' | 'getHolding'>, caller: Caller, id: string) {
  const coop = await getCooperative(repo, caller, id);
  return { cooperative_id: coop.cooperative_id, ...(await repo.getHolding(coop.cooperative_id)) };
}

/**
 * GET /cooperatives/{id}/flagged-farms: the cooperative's farms the forest check flagged (its
 * manual-review list). Errors: INSUFFICIENT_PERMISSIONS (403), COOPERATIVE_NOT_FOUND (404).
 */
export async function listFlaggedFarms(
  repo: Pick<RegistryStore, 'getCooperative' | 'flaggedFarmers'>,
  caller: Caller,
  id: string,
): Promise<{ cooperative_id: string; farmers: Farmer[] }> {
  const coop = await getCooperative(repo, caller, id);
  return { cooperative_id: coop.cooperative_id, farmers: await repo.flaggedFarmers(coop.cooperative_id) };
}
