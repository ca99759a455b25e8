import type { Caller } from '../../shared/domain/caller';
import { NationalRegistryUnavailableError } from '../../shared/domain/errors';
import type { FarmerRegistryLookup, ForestCheckResult, PendingNationalCheck } from '../../shared/domain/ports/registry';
import type { Farmer, Job } from '../../shared/domain/records';
import { registerFarmer, settlePendingNationalChecks } from '../../shared/use-cases/registry';
import { aCooperative, fakeForestCheck, fakeNationalFarmerRegistry, fakeRegistryStore } from './support/fakes';

/**
 * Registrations the national farmer registry (MAAIF) did not answer: stored pending with a job,
 * then settled by the scheduled sweep (no queue in between).
 */

const now = new Date('2026-11-22T10:00:00.000Z');
const coop: Caller = { sub: 'coop-user', role: 'COOPERATIVE', cooperative_id: 'COOP-1', duties: [] };
const clear: ForestCheckResult = {
  status: 'CLEAR',
  checked_at: now.toISOString(),
  cutoff_date: '2020-12-31',
  dataset: { name: 'umd_glad_landsat_alerts', version: 'v20261101' },
  alerts: [],
};
const input = {
  farmer_id: 'UG-0001',
  full_name: 'Wabwire John',
  cooperative_id: 'COOP-1',
  phone: '+256772000654',
  district: 'Mbale',
  farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1.2 },
};
const found: FarmerRegistryLookup = { found: true, farmer_id: 'UG-0001', full_name: 'Wabwire John', district: 'Mbale' };

describe('registerFarmer when the national registry does not answer', () => {
  it('stores the farmer PENDING with a PENDING job in one write (the store lists it for the sweep) and returns the job', async () => {
    const stored: Array<{ farmer: Farmer; job?: Job }> = [];
    const r = await registerFarmer(
      {
        registry: fakeRegistryStore({
          getCooperative: async () => aCooperative(),
          createFarmer: async (farmer, job) => {
            stored.push({ farmer, ...(job ? { job } : {}) });
          },
        }),
        forestCheck: fakeForestCheck({ check: async () => clear }),
        national: fakeNationalFarmerRegistry({
          lookup: async () => {
            throw new NationalRegistryUnavailableError('timeout');
          },
        }),
      },
      coop,
      input,
      now,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.farmer).toMatchObject({
      farmer_id: 'UG-0001',
      national_registry_status: 'PENDING',
      registered_at: now.toISOString(),
    });
    expect(stored[0]!.job).toMatchObject({
      type: 'FARMER_REGISTRATION',
      status: 'PENDING',
      farmer_id: 'UG-0001',
      cooperative_id: 'COOP-1',
      created_at: now.toISOString(),
    });
    expect(r.job).toEqual(stored[0]!.job);
  });

  it('stores a farmer the registry knows VERIFIED, without a job', async () => {
    const jobs: Array<Job | undefined> = [];
    const r = await registerFarmer(
      {
        registry: fakeRegistryStore({
          getCooperative: async () => aCooperative(),
          createFarmer: async (_f, job) => {
            jobs.push(job);
          },
        }),
        forestCheck: fakeForestCheck({ check: async () => clear }),
        national: fakeNationalFarmerRegistry({ lookup: async () => found }),
      },
      coop,
      input,
      now,
    );
    expect(jobs).toEqual([undefined]);
    expect(r.farmer.national_registry_status).toBe('VERIFIED');
    expect(r.job).toBeUndefined();
  });
});

describe('settlePendingNationalChecks (the scheduled national-registry check)', () => {
  const pending = (id: string, minute = 0): PendingNationalCheck => ({
    farmer_id: id,
    job_id: `JOB-${id}`,
    registered_at: `2026-11-22T09:${String(minute).padStart(2, '0')}:00.000Z`,
  });

  /** The registry's answer per farmer id: a lookup result, or an error to throw. */
  function fakes(list: PendingNationalCheck[], answers: Record<string, FarmerRegistryLookup | Error>, settleFails: string[] = []) {
    const calls: string[] = [];
    const deps: Parameters<typeof settlePendingNationalChecks>[0] = {
      now: () => now,
      registry: fakeRegistryStore({
        pendingNationalChecks: async (limit) => {
          calls.push(`pending ${limit}`);
          return list;
        },
        settleNationalCheck: async (farmerId, jobId, outcome, at) => {
          if (settleFails.includes(farmerId)) throw new Error('throttled');
          calls.push(`settle ${farmerId} ${jobId} ${outcome} ${at}`);
        },
      }),
      national: fakeNationalFarmerRegistry({
        lookup: async (id) => {
          calls.push(`lookup ${id}`);
          const a = answers[id];
          if (!a) throw new Error(`no answer for ${id}`);
          if (a instanceof Error) throw a;
          return a;
        },
      }),
    };
    return { deps, calls };
  }

  it('settles each pending registration, oldest first: found → VERIFIED (job COMPLETE), not found → REJECTED (job FAILED)', async () => {
    const { deps, calls } = fakes([pending('UG-A', 1), pending('UG-B', 2)], {
      'UG-A': { ...found, farmer_id: 'UG-A' },
      'UG-B': { found: false },
    });
    const report = await settlePendingNationalChecks(deps);
    expect(calls).toEqual([
      'pending 50',
      'lookup UG-A',
      `settle UG-A JOB-UG-A VERIFIED ${now.toISOString()}`,
      'lookup UG-B',
      `settle UG-B JOB-UG-B REJECTED ${now.toISOString()}`,
    ]);
    expect(report).toEqual({ examined: 2, verified: 1, rejected: 1, stillPending: 0, skipped: 0, failed: 0 });
  });

  it('leaves a registration the registry still does not answer pending, and goes on with the others', async () => {
    const { deps, calls } = fakes([pending('UG-A'), pending('UG-B'), pending('UG-C')], {
      'UG-A': new NationalRegistryUnavailableError('timeout'),
      'UG-B': new Error('registry answered 401'),
      'UG-C': { ...found, farmer_id: 'UG-C' },
    });
    const report = await settlePendingNationalChecks(deps, { limit: 10 });
    expect(calls.filter((c) => c.startsWith('settle'))).toEqual([`settle UG-C JOB-UG-C VERIFIED ${now.toISOString()}`]);
    expect(calls[0]).toBe('pending 10');
    expect(report).toEqual({ examined: 3, verified: 1, rejected: 0, stillPending: 1, skipped: 0, failed: 1 });
  });

  it('a failed settle write is counted and logged; the next registration is still settled', async () => {
    const { deps, calls } = fakes([pending('UG-A'), pending('UG-B')], { 'UG-A': { found: false }, 'UG-B': { found: false } }, ['UG-A']);
    const report = await settlePendingNationalChecks(deps);
    expect(calls.filter((c) => c.startsWith('settle'))).toEqual([`settle UG-B JOB-UG-B REJECTED ${now.toISOString()}`]);
    expect(report).toMatchObject({ examined: 2, rejected: 1, failed: 1 });
  });

  it('stops asking after three unanswered look-ups in a row (the registry is down); the rest wait for the next run', async () => {
    const down = new NationalRegistryUnavailableError('connection refused');
    const { deps, calls } = fakes([pending('UG-A'), pending('UG-B'), pending('UG-C'), pending('UG-D'), pending('UG-E')], {
      'UG-A': down,
      'UG-B': down,
      'UG-C': down,
      'UG-D': { found: false },
      'UG-E': { found: false },
    });
    const report = await settlePendingNationalChecks(deps);
    expect(calls).toEqual(['pending 50', 'lookup UG-A', 'lookup UG-B', 'lookup UG-C']);
    expect(report).toEqual({ examined: 3, verified: 0, rejected: 0, stillPending: 3, skipped: 2, failed: 0 });
  });

  it('an answer in between resets the count of unanswered look-ups', async () => {
    const down = new NationalRegistryUnavailableError('timeout');
    const { deps } = fakes([pending('UG-A'), pending('UG-B'), pending('UG-C'), pending('UG-D'), pending('UG-E')], {
      'UG-A': down,
      'UG-B': down,
      'UG-C': { found: false },
      'UG-D': down,
      'UG-E': down,
    });
    expect(await settlePendingNationalChecks(deps)).toEqual({
      examined: 5,
      verified: 0,
      rejected: 1,
      stillPending: 4,
      skipped: 0,
      failed: 0,
    });
  });

  it('does nothing when no registration is waiting', async () => {
    const { deps, calls } = fakes([], {});
    expect(await settlePendingNationalChecks(deps)).toEqual({
      examined: 0,
      verified: 0,
      rejected: 0,
      stillPending: 0,
      skipped: 0,
      failed: 0,
    });
    expect(calls).toEqual(['pending 50']);
  });
});
