import type { Farmer } from '../../shared/domain/records';
import { farmsFailingGeometryRules } from '../../shared/use-cases/farm-geometry-check';

async function* of(farmers: Array<Pick<Farmer, 'farmer_id' | 'cooperative_id' | 'farm'>>): AsyncGenerator<Farmer> {
  for (const f of farmers) yield f as Farmer;
}

describe('farmsFailingGeometryRules (npm run farm-geometry-check)', () => {
  it('lists the stored farms that registration would refuse today, with the rule, and passes the others', async () => {
    const ok = { farmer_id: 'F-OK', cooperative_id: 'C', farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 2 } };
    const kenya = { farmer_id: 'F-KE', cooperative_id: 'C', farm: { gps: { lat: -1.2864, lng: 36.8172 }, area_ha: 2 } };
    const repeated = {
      farmer_id: 'F-RP',
      cooperative_id: 'C',
      farm: {
        gps: { lat: 1.37, lng: 34.45 },
        area_ha: 5,
        polygon: {
          type: 'Polygon' as const,
          coordinates: [
            [
              [34.45, 1.37],
              [34.452, 1.37],
              [34.452, 1.37],
              [34.452, 1.372],
              [34.45, 1.372],
              [34.45, 1.37],
            ],
          ],
        },
      },
    };
    const r = await farmsFailingGeometryRules(of([ok, kenya, repeated]));
    expect(r.checked).toBe(3);
    expect(r.failing.map((f) => [f.farmer_id, f.code, (f.details as Array<{ rule: string }>)[0]!.rule])).toEqual([
      ['F-KE', 'GEOMETRY_RULE_VIOLATED', 'INSIDE_UGANDA'],
      ['F-RP', 'GEOMETRY_RULE_VIOLATED', 'NO_REPEATED_POSITION'],
    ]);
  });
});
