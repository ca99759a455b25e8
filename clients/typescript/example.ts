import { createCoffeeTraceClient } from '@coffee-trace/api-client';

// A cooperative's token (a JWT from your identity provider) and the API's base URL.
const api = createCoffeeTraceClient({
  baseUrl: process.env.COFFEE_TRACE_URL ?? 'http://127.0.0.1:3000',
  token: process.env.COFFEE_TRACE_TOKEN ?? '',
});

export async function submitAndReadBatch(): Promise<void> {
  // POST /batch/submit: the body is checked against the API's schema at compile time.
  const submitted = await api.POST('/batch/submit', {
    body: {
      farmer_id: 'UG-BUD-004512',
      cooperative_id: 'BUGISU-CU-01',
      weight_kg: 182.4,
      grade: 'screen18',
      moisture_pct: 11.2,
      collection_point_gps: { lat: 1.011812, lng: 34.331245 },
      collector_agent_id: 'AGENT-7',
    },
  });
  if (submitted.error) throw new Error(`submit failed: ${submitted.response.status} ${JSON.stringify(submitted.error)}`);
  // 201: minted, `{ success, data: { batch_id, … } }`; 202: still minting, `{ job_id, status, batch_id }`.
  const batchId = 'data' in submitted.data ? submitted.data.data.batch_id : submitted.data.batch_id;
  if (!batchId) return console.log(`still minting: job ${'job_id' in submitted.data ? submitted.data.job_id : ''}`);

  // GET /batch/{id}: path parameters are typed too.
  const batch = await api.GET('/batch/{id}', { params: { path: { id: batchId } } });
  if (batch.error) throw new Error(`read failed: ${batch.response.status} ${JSON.stringify(batch.error)}`);
  console.log(`${batch.data.batch_id}: ${batch.data.stage}, payment ${batch.data.payment_status}`);
}
