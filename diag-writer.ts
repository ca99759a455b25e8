import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { signDevToken } from './infra/local/dev-keys';
import { LOCAL_TABLE_NAME } from './infra/local/dynamodb-local';
import { startStackProcess } from './test/support/stack-process';
import { apiCaller, acceptedBatch } from './test/bench/submission';

const N = Number(process.env.N ?? 100);
const C = Number(process.env.C ?? 50);
async function main() {
  const stack = await startStackProcess(
    {
      LOCAL_METERING_FILE: '/tmp/writer-meter.json',
      LEDGER_BLOCK_TIME_S: '2',
      LOCAL_RATE_LIMIT_RPS: '100000',
      LOCAL_RATE_LIMIT_BURST: '100000',
    },
    180_000,
  );
  try {
    const { url, dataDir } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN' }, 3600, dataDir);
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: 'D' }, 3600, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: 'D',
      name: 'D',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 0,
    });
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'F',
      full_name: 'F F',
      cooperative_id: 'D',
      phone: '+256772000505',
      district: 'Mbale',
      farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
    });
    const body = {
      farmer_id: 'F',
      cooperative_id: 'D',
      weight_kg: 150,
      grade: 'screen18',
      moisture_pct: 11,
      collection_point_gps: { lat: 1.08, lng: 34.17 },
      collector_agent_id: 'A',
    };
    const t0 = Date.now();
    let next = 0;
    const accepted: number[] = [];
    await Promise.all(
      Array.from({ length: C }, async () => {
        while (next < N) {
          next++;
          const r = await call('POST', '/batch/submit', coop, body);
          acceptedBatch(r);
          accepted.push(Date.now());
        }
      }),
    );
    console.log(`accepted ${N} in ${(Date.now() - t0) / 1000}s`);
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: stack.info.endpoints.dynamodb,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const scan = async () => {
      const items: any[] = [];
      let k: any;
      do {
        const r = await ddb.send(new ScanCommand({ TableName: LOCAL_TABLE_NAME, ExclusiveStartKey: k }));
        items.push(...(r.Items ?? []));
        k = r.LastEvaluatedKey;
      } while (k);
      return items;
    };
    for (let i = 0; i < 60; i++) {
      const items = await scan();
      const open = items.filter((x) => x.entity === 'LEDGER_TX' && x.kind === 'MINT' && x.status !== 'CONFIRMED').length;
      if (open === 0) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const items = await scan();
    const groups = items.filter((x) => x.entity === 'LEDGER_GROUP').sort((a, b) => a.created_at.localeCompare(b.created_at));
    const rel = (s?: string) => (s ? ((Date.parse(s) - t0) / 1000).toFixed(1) : '-');
    for (const g of groups)
      console.log(
        `${g.kind} created ${rel(g.created_at)} sealed ${rel(g.sealed_at)} sent ${rel(g.sent_at)} settled ${rel(g.settled_at)} members ${g.members?.length} nonce ${g.nonce} sent_block ${g.sent_block} block ${g.block_number}`,
      );
    const txs = items.filter((x) => x.entity === 'LEDGER_TX' && x.kind === 'MINT');
    const lat = txs
      .map((t) => (Date.parse(t.confirmed_at ?? new Date().toISOString()) - Date.parse(t.created_at)) / 1000)
      .sort((a, b) => a - b);
    console.log(
      `mint commit→confirmed p50 ${lat[Math.floor(lat.length / 2)]} p95 ${lat[Math.floor(lat.length * 0.95)]} open ${txs.filter((t) => t.status !== 'CONFIRMED').length}`,
    );
  } finally {
    await stack.stop();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
