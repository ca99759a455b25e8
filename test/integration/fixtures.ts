import { api, token, uid } from '../support/api';

export { purchaseOrderBody } from '../support/purchase-order-body';

/** A Bugisu cooperative with realistic prices (UGX per kg). */
function cooperativeBody(id: string, overrides: Record<string, unknown> = {}) {
  return {
    cooperative_id: id,
    name: 'Bugisu Cooperative Union',
    district: 'Mbale',
    licence_status: 'ACTIVE',
    licence_expires_at: '2030-12-31',
    manager: { name: 'Sarah Wanyama', email: 'manager@bugisu.example', phone: '+256772123456' },
    prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
    export_premium_ugx_per_kg: 400,
    ...overrides,
  };
}

/** A farm on the slopes of Mt Elgon (outside every alert area). */
function farmerBody(id: string, cooperativeId: string, phone?: string) {
  return {
    farmer_id: id,
    full_name: 'Joseph Wamala',
    cooperative_id: cooperativeId,
    ...(phone ? { phone } : {}),
    district: 'Mbale',
    farm: { gps: { lat: 1.080123, lng: 34.175045 }, area_ha: 1.5 },
  };
}

export function batchBody(farmerId: string, cooperativeId: string, overrides: Record<string, unknown> = {}) {
  return {
    farmer_id: farmerId,
    cooperative_id: cooperativeId,
    weight_kg: 120.5,
    grade: 'screen18',
    moisture_pct: 11.5,
    collection_point_gps: { lat: 1.0801, lng: 34.1751 },
    weight_slip_photo_url: 'ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
    collector_agent_id: 'AGENT-MBL-07',
    ...overrides,
  };
}

/** Creates a cooperative and returns its id with ADMIN, COOPERATIVE and AGENT tokens for it. */
export async function setUpCooperative(overrides: Record<string, unknown> = {}) {
  const id = uid('COOP');
  const admin = await token({ role: 'ADMIN', sub: 'admin-test' });
  const res = await api('POST', '/cooperatives', { token: admin, body: cooperativeBody(id, overrides) });
  if (res.status !== 201) throw new Error(`cooperative setup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    id,
    admin,
    coop: await token({ role: 'COOPERATIVE', cooperative_id: id, sub: `officer-${id}` }),
    agent: await token({ role: 'AGENT', cooperative_id: id, sub: `agent-${id}` }),
  };
}

/** Registers a farmer of the cooperative with the given phone. */
export async function registerFarmer(coopId: string, tok: string, phone?: string) {
  const id = uid('UG-MBL');
  const res = await api('POST', '/farmers/register', { token: tok, body: farmerBody(id, coopId, phone) });
  if (res.status !== 201) throw new Error(`farmer setup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return id;
}
