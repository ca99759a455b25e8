import { join } from 'node:path';
import { createClientAsync, WSSecurity } from 'soap';
import { SoapDdsRegistry, TRACES_BASE_V4_NS } from '../../shared/adapters/eudr/soap-dds-registry';
import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { buildShipmentStatement } from '../../shared/domain/dds-shipment';
import type { Farmer } from '../../shared/domain/records';
import { repoRoot } from '../../shared/runtime/paths';
import { startDdsRegistrySandbox, type DdsRegistrySandbox } from '../../infra/local/dds-registry-sandbox';

/**
 * A peer client no one here wrote — the `soap` package's client (createClientAsync on a minimal WSDL
 * of the V3 amendDds/withdrawDds operations, test/fixtures/eudr/dds-v3-modify.wsdl, with its own
 * WS-Security PasswordDigest) — against the registry sandbox's amend and withdraw.
 */
const creds = { username: 'peer-user', authKey: 'peer-key', clientId: 'eudr-test' };

function submitXml(ref: string, description?: string): string {
  const f = {
    farmer_id: 'F-1',
    full_name: 'Peer Farmer',
    cooperative_id: 'C',
    district: 'Bulambuli',
    farm: { gps: { lat: 1.1, lng: 34.2 }, area_ha: 1 },
    gfw_status: 'CLEAR',
  } as Farmer;
  return submitDdsRequestXml(
    buildShipmentStatement({
      ddsId: ref,
      internalReferenceNumber: ref,
      purchaseOrderId: 'PO-PEER',
      batches: [{ batch_id: 'BATCH-2026-000001', farmer_id: 'F-1', grade: 'screen18', stage: 'MILLED', outturn_kg: 60 }],
      farmers: new Map([['F-1', f]]),
      operator: {
        name: 'Importer GmbH',
        eori: 'DE123456789012345',
        address: 'Am Sandtorkai 1, 20457 Hamburg',
        email: 'a@b.example',
        country: 'DE',
      },
      ...(description ? { description } : {}),
      createdAt: '2026-11-27T00:00:00.000Z',
    }),
    { prettyPrint: false },
  );
}

describe('the soap package client against the sandbox amendDds / withdrawDds', () => {
  let sandbox: DdsRegistrySandbox;
  beforeAll(async () => {
    sandbox = await startDdsRegistrySandbox({ ...creds, availableAfterMs: 50 });
  });
  afterAll(() => sandbox.stop());

  async function availableDds(ref: string, description?: string): Promise<{ uuid: string; xml: string }> {
    const ours = new SoapDdsRegistry({ endpoint: sandbox.url, ...creds });
    const xml = submitXml(ref, description);
    const { uuid } = await ours.submit(xml, { internalReference: ref });
    for (let i = 0; i < 100 && (await ours.status(uuid)).status !== 'AVAILABLE'; i++) await new Promise((r) => setTimeout(r, 20));
    return { uuid, xml };
  }

  async function peer() {
    const client = await createClientAsync(join(repoRoot(), 'test', 'fixtures', 'eudr', 'dds-v3-modify.wsdl'), { endpoint: sandbox.url });
    client.setSecurity(
      new WSSecurity(creds.username, creds.authKey, { passwordType: 'PasswordDigest', hasTimeStamp: true, hasNonce: true }),
    );
    client.addSoapHeader(`<v4:WebServiceClientId xmlns:v4="${TRACES_BASE_V4_NS}">${creds.clientId}</v4:WebServiceClientId>`);
    return client;
  }

  it('amends (SUBMITTED) and withdraws (WITHDRAWN) as the soap client sends them', async () => {
    const { uuid, xml } = await availableDds('PEER-AMEND-1');
    const statement = /<dds:statement>[\s\S]*<\/dds:statement>/.exec(xml)![0];
    const client = await peer();
    const [amended] = await client.amendDdsAsync({
      $xml: `<dds:uuid xmlns:dds="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3">${uuid}</dds:uuid>${statement.replace('<dds:statement>', '<dds:statement xmlns:dds="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3" xmlns:eudrCommon="http://ec.europa.eu/tracesnt/certificate/eudr/common/v3">')}`,
    });
    process.stdout.write(`soap client amendDds → ${JSON.stringify(amended)}\n`);
    expect(amended).toEqual({ uuid, status: 'SUBMITTED' });
    await new Promise((r) => setTimeout(r, 120));
    const [withdrawn] = await client.withdrawDdsAsync({ uuid });
    process.stdout.write(`soap client withdrawDds → ${JSON.stringify(withdrawn)}\n`);
    expect(withdrawn).toEqual({ uuid, status: 'WITHDRAWN' });
    expect(sandbox.modifications()).toEqual({ amended: 1, withdrawn: 1 });
  });

  it('gets the sandbox refusal as a SOAP fault: a locked statement (EUDR_API_DDS_LOCKED)', async () => {
    const { uuid } = await availableDds('PEER-LOCK-1', 'Green coffee CUSTOMS-LOCK');
    const client = await peer();
    const err = (await client.withdrawDdsAsync({ uuid }).catch((e: unknown) => e)) as {
      root?: { Envelope?: { Body?: { Fault?: unknown } } };
    };
    const fault = err.root?.Envelope?.Body?.Fault;
    process.stdout.write(`soap client withdrawDds (locked) → ${JSON.stringify(fault)}\n`);
    expect(JSON.stringify(fault)).toContain('EUDR_API_DDS_LOCKED');
  });
});
