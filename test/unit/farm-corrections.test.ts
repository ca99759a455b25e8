import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { FarmerFarmRepository } from '../../shared/adapters/dynamodb/farmer-farm-repo';
import type { Caller } from '../../shared/domain/caller';
import { DomainError } from '../../shared/domain/errors';
import { farmSha256 } from '../../shared/domain/farm-geometry';
import type { FarmerFarmStore, ForestCheck } from '../../shared/domain/ports/registry';
import type { Farmer } from '../../shared/domain/records';
import { replaceFarmerFarm } from '../../shared/use-cases/farm-corrections';
import { aFarmer, fakeRegistryStore } from './support/fakes';
import { useHandlerMocks } from './support/handler-fixtures';

/**
 * PUT /farmers/{id}/farm (docs/api/eudr.md#correcting-a-plot): registration's geometry rules, the
 * farmer's cooperative, a new forest check, one conditional transaction with the audit of the change;
 * the same plot again changes nothing.
 */

const { ddb } = useHandlerMocks();
const agent: Caller = { sub: 'agent-1', role: 'AGENT', cooperative_id: 'COOP-1', duties: [] };
const NOW = new Date('2026-11-23T08:00:00.000Z');
// About 0.3 ha in Bududa, corners with 6 decimals.
const square = [
  [34.33098, 1.01158],
  [34.33152, 1.01158],
  [34.33152, 1.01204],
  [34.33098, 1.01204],
  [34.33098, 1.01158],
];
const newPlot = { gps: { lat: 1.01181, lng: 34.33125 }, polygon: { type: 'Polygon' as const, coordinates: [square] }, area_ha: 0.31 };

function setUp(farmer: Farmer | null, opts: { replaced?: boolean; forest?: ForestCheck } = {}) {
  const writes: Array<Parameters<FarmerFarmStore['replaceFarm']>[0]> = [];
  const checks: unknown[] = [];
  const deps = {
    registry: fakeRegistryStore({ getFarmer: async () => farmer }),
    farms: {
      replaceFarm: async (input: Parameters<FarmerFarmStore['replaceFarm']>[0]) => {
        writes.push(input);
        return opts.replaced ?? true;
      },
    },
    forestCheck: opts.forest ?? {
      check: async (farm: unknown) => {
        checks.push(farm);
        return {
          status: 'CLEAR' as const,
          checked_at: '2026-11-23T08:00:00.412Z',
          cutoff_date: '2020-12-31',
          dataset: { name: 'bundled-alert-areas', version: '2026-11-01' },
          alerts: [],
        };
      },
    },
  };
  return { deps, writes, checks };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof DomainError ? e.code : String(e)),
  );

describe('replaceFarmerFarm', () => {
  it('replaces the plot: geodesic area, a new forest check, the change audited with both SHA-256 in one conditional write', async () => {
    const before = aFarmer();
    const { deps, writes, checks } = setUp(before);

    const after = await replaceFarmerFarm(deps, agent, 'F-1', newPlot, NOW);

    expect(checks).toHaveLength(1);
    expect(writes).toHaveLength(1);
    const w = writes[0]!;
    expect(w).toMatchObject({
      farmer_id: 'F-1',
      cooperative_id: 'COOP-1',
      previous_updated_at: null,
      previous_farm: before.farm,
      forest: { status: 'CLEAR', checked_at: '2026-11-23T08:00:00.412Z', dataset: { name: 'bundled-alert-areas', version: '2026-11-01' } },
      change: {
        at: NOW.toISOString(),
        actor: 'agent-1',
        actor_role: 'AGENT',
        previous_farm_sha256: farmSha256(before.farm),
        farm_sha256: farmSha256(newPlot),
      },
    });
    expect(w.farm).toEqual({ ...newPlot, computed_area_ha: expect.any(Number) });
    expect(w.farm.computed_area_ha!).toBeGreaterThan(0.28);
    expect(w.farm.computed_area_ha!).toBeLessThan(0.34);
    expect(after).toMatchObject({ farm: w.farm, farm_updated_at: NOW.toISOString(), farm_changes: [w.change], gfw_status: 'CLEAR' });
  });

  it('changes nothing for the same plot again: no forest check, no write, the farmer as it is', async () => {
    const farmer = aFarmer({ farm: { ...newPlot, computed_area_ha: 0.3 }, farm_updated_at: '2026-11-22T00:00:00.000Z' });
    const { deps, writes, checks } = setUp(farmer);
    // Keys in another order are the same plot.
    const same = { area_ha: 0.31, polygon: newPlot.polygon, gps: { lng: 34.33125, lat: 1.01181 } };

    expect(await replaceFarmerFarm(deps, agent, 'F-1', same, NOW)).toBe(farmer);
    expect([writes.length, checks.length]).toEqual([0, 0]);
  });

  it('conditions the write on the last replacement read, and answers 409 DUPLICATE_REQUEST when another came first', async () => {
    const { deps, writes } = setUp(aFarmer({ farm_updated_at: '2026-11-22T00:00:00.000Z' }), { replaced: false });

    expect(await codeOf(replaceFarmerFarm(deps, agent, 'F-1', newPlot, NOW))).toBe('DUPLICATE_REQUEST');
    expect(writes[0]!.previous_updated_at).toBe('2026-11-22T00:00:00.000Z');
  });

  it('refuses what registration refuses, before reading: a hole, a collapse at 6 decimals, a point above 4 ha', async () => {
    const { deps, writes } = setUp(aFarmer());
    const hole = [
      [34.3311, 1.0117],
      [34.3313, 1.0117],
      [34.3313, 1.0119],
      [34.3311, 1.0119],
      [34.3311, 1.0117],
    ];
    const tiny = [
      [34.3310001, 1.0110001],
      [34.3310004, 1.0110001],
      [34.3310004, 1.0110004],
      [34.3310001, 1.0110004],
      [34.3310001, 1.0110001],
    ];
    const refused = async (farm: Parameters<typeof replaceFarmerFarm>[3]) => {
      const err = await replaceFarmerFarm(deps, agent, 'F-1', farm, NOW).catch((e: DomainError) => e);
      return [(err as DomainError).code, ((err as DomainError).details as Array<{ rule?: string }>)?.map((d) => d.rule ?? d)];
    };
    expect(await refused({ ...newPlot, polygon: { type: 'Polygon', coordinates: [square, hole] } })).toEqual([
      'GEOMETRY_RULE_VIOLATED',
      ['NO_HOLES'],
    ]);
    expect((await refused({ ...newPlot, polygon: { type: 'Polygon', coordinates: [tiny] } }))[0]).toMatch(
      /GEOMETRY_RULE_VIOLATED|VALIDATION_ERROR/,
    );
    expect((await refused({ gps: newPlot.gps, area_ha: 5 }))[0]).toBe('VALIDATION_ERROR');
    expect(writes).toHaveLength(0);
  });

  it('answers 404 for an unknown farmer and 403 for another cooperative, writing nothing', async () => {
    const unknown = setUp(null);
    expect(await codeOf(replaceFarmerFarm(unknown.deps, agent, 'F-9', newPlot, NOW))).toBe('FARMER_NOT_REGISTERED');
    const other = setUp(aFarmer({ cooperative_id: 'COOP-2' }));
    expect(await codeOf(replaceFarmerFarm(other.deps, agent, 'F-1', newPlot, NOW))).toBe('INSUFFICIENT_PERMISSIONS');
    expect([unknown.writes.length, other.writes.length]).toEqual([0, 0]);
  });

  it('records the plot PENDING (no check time or dataset) when the forest service does not answer', async () => {
    const { deps, writes } = setUp(aFarmer(), {
      forest: {
        check: async () => {
          throw new DomainError('GFW_API_UNAVAILABLE', 'down', { retryAfterSeconds: 300 });
        },
      },
    });
    const after = await replaceFarmerFarm(deps, agent, 'F-1', newPlot, NOW);
    expect(writes[0]!.forest).toEqual({ status: 'PENDING' });
    expect(after.gfw_status).toBe('PENDING');
    expect(after).not.toHaveProperty('gfw_checked_at');
    expect(after).not.toHaveProperty('gfw_dataset');
  });
});

describe('FarmerFarmRepository.replaceFarm', () => {
  const input = {
    farmer_id: 'F-1',
    cooperative_id: 'COOP-1',
    previous_updated_at: null,
    previous_farm: aFarmer().farm,
    farm: { ...newPlot, computed_area_ha: 0.3 },
    forest: { status: 'PENDING' as const },
    change: { at: NOW.toISOString(), actor: 'agent-1', actor_role: 'AGENT', previous_farm_sha256: 'a', farm_sha256: 'b' },
  };

  it('updates the farmer on its condition and puts the change record with both plots, in one transaction', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    expect(await new FarmerFarmRepository().replaceFarm(input)).toBe(true);
    const items = ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items[0]!.Update).toMatchObject({
      Key: { PK: 'FARMER#F-1', SK: 'META' },
      ConditionExpression: 'attribute_exists(PK) AND cooperative_id = :coop AND attribute_not_exists(farm_updated_at)',
    });
    expect(items[0]!.Update!.UpdateExpression).toContain('REMOVE gfw_checked_at, gfw_dataset');
    expect(items[1]!.Put).toMatchObject({
      Item: { PK: 'FARMER#F-1', SK: `FARM_CHANGE#${NOW.toISOString()}`, previous_farm: input.previous_farm, farm: input.farm },
      ConditionExpression: 'attribute_not_exists(PK)',
    });
  });

  it('answers false when a condition fails, and rethrows anything else', async () => {
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
      }),
    );
    expect(await new FarmerFarmRepository().replaceFarm({ ...input, previous_updated_at: '2026-11-22T00:00:00.000Z' })).toBe(false);
    expect(ddb.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems![0]!.Update!.ConditionExpression).toContain(
      'farm_updated_at = :prev',
    );
    ddb.on(TransactWriteCommand).rejects(new Error('boom'));
    await expect(new FarmerFarmRepository().replaceFarm(input)).rejects.toThrow('boom');
  });
});
