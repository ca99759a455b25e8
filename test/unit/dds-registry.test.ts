import { createHash, randomBytes } from 'node:crypto';
import { passwordDigest as soapPasswordDigest } from 'soap/lib/utils';
import { WSSecurity } from 'soap/lib/security/WSSecurity';
import { DdsRegistryRejectedError, DdsRegistryUnavailableError } from '../../shared/domain/errors';
import {
  DDS_OPERATIONS,
  SoapDdsRegistry,
  buildDdsSoapEnvelope,
  toRegistryStatus,
  wsPasswordDigest,
} from '../../shared/adapters/eudr/soap-dds-registry';
import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { buildDueDiligenceStatement, type BuildDdsInput, type DueDiligenceStatement } from '../../shared/domain/dds';
import type { Farmer } from '../../shared/domain/records';
import { startDdsRegistrySandbox, type DdsRegistrySandbox, type DdsRegistrySandboxOptions } from '../../infra/local/dds-registry-sandbox';

const USER = 'hanse-kaffee-api';
const AUTH_KEY = 'sandbox-auth-key-7f3a9c';
const CLIENT_ID = 'eudr-test';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function farmer(over: Partial<Farmer> & Pick<Farmer, 'farmer_id' | 'full_name' | 'farm'>): Farmer {
  return {
    cooperative_id: 'COOP-BUGISU-01',
    district: 'Bulambuli',
    gfw_status: 'CLEAR',
    gfw_checked_at: '2026-09-20T08:00:00Z',
    gfw_dataset: { name: 'gfw_integrated_alerts', version: 'v20260915' },
    registered_at: '2026-03-01T09:00:00Z',
    registered_by: 'agent-07',
    ...over,
  };
}

/** A realistic DDS (as in dds.test.ts): a 4.98 ha polygon plot and a 1.8 ha point plot on Mt Elgon, imported into Germany. */
function dds(internalReferenceNumber = 'UG-COOP-BUGISU-01-B-2026-000123'): DueDiligenceStatement {
  const ring = [
    [34.231457, 1.142318],
    [34.2337, 1.142318],
    [34.2337, 1.144118],
    [34.231457, 1.144118],
    [34.231457, 1.142318],
  ];
  const input: BuildDdsInput = {
    ddsId: 'DDS-01JD8Z3Q4W6Y8A0C2E4G6J8K9M',
    internalReferenceNumber,
    batch: { batch_id: 'B-2026-000123', weight_kg: 19200.25, grade: 'screen18', cooperative_id: 'COOP-BUGISU-01', stage: 'WAREHOUSED' },
    producers: [
      {
        farmer: farmer({
          farmer_id: 'UGF-000451',
          full_name: 'Wanyenze Margaret',
          farm: { gps: { lat: 1.143218, lng: 34.232578 }, polygon: { type: 'Polygon', coordinates: [ring] }, area_ha: 5 },
        }),
      },
      {
        farmer: farmer({
          farmer_id: 'UGF-000452',
          full_name: 'Masaba Peter',
          district: 'Sironko',
          farm: { gps: { lat: 1.2, lng: 34.2751234 }, area_ha: 1.8 },
        }),
      },
    ],
    operator: {
      name: 'Hanseatische Kaffee Import GmbH',
      eori: 'DE123456789012345',
      address: 'Am Sandtorkai 5, 20457 Hamburg',
      email: 'eudr@hanse-kaffee.example.de',
      country: 'DE',
    },
    destinationCountry: 'DE',
    createdAt: '2026-10-01T10:15:00Z',
  };
  return buildDueDiligenceStatement(input);
}

const running: DdsRegistrySandbox[] = [];
async function sandbox(over: Partial<DdsRegistrySandboxOptions> = {}): Promise<DdsRegistrySandbox> {
  const s = await startDdsRegistrySandbox({ port: 0, username: USER, authKey: AUTH_KEY, clientId: CLIENT_ID, ...over });
  running.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function client(endpoint: string, over: Partial<ConstructorParameters<typeof SoapDdsRegistry>[0]> = {}): SoapDdsRegistry {
  return new SoapDdsRegistry({ endpoint, username: USER, authKey: AUTH_KEY, clientId: CLIENT_ID, ...over });
}

async function rejection(p: Promise<unknown>): Promise<DdsRegistryRejectedError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DdsRegistryRejectedError);
  return err as DdsRegistryRejectedError;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('wsPasswordDigest (WS-Security UsernameToken Profile 1.0)', () => {
  it('is Base64(SHA-1(nonce bytes + Created + password)) — known vector', () => {
    const nonceB64 = 'MTIzNDU2Nzg5MGFiY2RlZg=='; // the 16 bytes "1234567890abcdef"
    const created = '2026-09-20T10:15:30.000Z';
    const password = 'sandbox-auth-key';
    // By hand from the spec formula; the literal was computed independently with
    // `(base64 -d <<< nonce; printf %s "$created$password") | openssl dgst -sha1 -binary | base64`.
    const byHand = createHash('sha1')
      .update(Buffer.concat([Buffer.from(nonceB64, 'base64'), Buffer.from(created, 'utf8'), Buffer.from(password, 'utf8')]))
      .digest('base64');
    expect(byHand).toBe('+37RkgV3ISo9frOrKTQ4rmWqA5E=');
    expect(wsPasswordDigest(Buffer.from(nonceB64, 'base64'), created, password)).toBe(byHand);
  });

  it("agrees with the soap package's passwordDigest (the digest its WSSecurity sends)", () => {
    for (const [created, password] of [
      ['2026-09-20T10:15:30.000Z', AUTH_KEY],
      ['2026-09-20T10:15:30Z', 'clé-ünïcode-鍵'],
      ['2027-01-01T00:00:00.123Z', ''],
    ]) {
      const nonce = randomBytes(16);
      expect(wsPasswordDigest(nonce, created!, password!)).toBe(soapPasswordDigest(nonce.toString('base64'), created!, password!));
    }
  });

  it('puts the digest, nonce, Created, Timestamp and WebServiceClientId in the envelope without line breaks', () => {
    const nonce = Buffer.from('1234567890abcdef');
    const created = new Date('2026-09-20T10:15:30.000Z');
    const env = buildDdsSoapEnvelope(
      submitDdsRequestXml(dds()),
      { username: USER, authKey: AUTH_KEY, clientId: CLIENT_ID },
      { created, nonce },
    );
    expect(env).not.toMatch(/[\r\n]/);
    expect(env).toContain(`>${wsPasswordDigest(nonce, created.toISOString(), AUTH_KEY)}</wsse:Password>`);
    expect(env).toContain('Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"');
    expect(env).toContain(`>${nonce.toString('base64')}</wsse:Nonce>`);
    expect(env).toContain('<wsu:Created>2026-09-20T10:15:30.000Z</wsu:Created><wsu:Expires>2026-09-20T10:20:30.000Z</wsu:Expires>');
    expect(env).toContain(
      `<v4:WebServiceClientId xmlns:v4="http://ec.europa.eu/sanco/tracesnt/base/v4">${CLIENT_ID}</v4:WebServiceClientId>`,
    );
    expect(env).toMatch(/<soapenv:Body><dds:SubmitDdsRequest [^>]*><dds:operatorRole>OPERATOR<\/dds:operatorRole>/);
  });
});

describe('SoapDdsRegistry against the DDS registry sandbox', () => {
  it('files a real DDS: a UUID at once, then SUBMITTED while the registry works on it', async () => {
    const s = await sandbox(); // default availableAfterMs: 1500
    const registry = client(s.url);
    const statement = dds();
    const { uuid } = await registry.submit(submitDdsRequestXml(statement), { internalReference: statement.internal_reference_number });
    expect(uuid).toMatch(UUID_RE);
    expect(s.submissions()).toBe(1);
    await expect(registry.status(uuid)).resolves.toEqual({ status: 'SUBMITTED' });
  });

  it('becomes AVAILABLE with reference and verification numbers (availableAfterMs: 100)', async () => {
    const s = await sandbox({ availableAfterMs: 100 });
    const registry = client(s.url);
    const statement = dds();
    const { uuid } = await registry.submit(submitDdsRequestXml(statement), { internalReference: statement.internal_reference_number });
    let info = await registry.status(uuid);
    for (const deadline = Date.now() + 5000; info.status === 'SUBMITTED' && Date.now() < deadline; info = await registry.status(uuid))
      await sleep(50);
    expect(info.status).toBe('AVAILABLE');
    expect(info.reference_number).toMatch(new RegExp(`^${String(new Date().getUTCFullYear() % 100).padStart(2, '0')}DE[A-Z0-9]{10}$`));
    expect(info.verification_number).toMatch(/^[A-Z0-9]{8}$/);
    await expect(registry.status(uuid)).resolves.toEqual(info);
  });

  it('answers the same UUID for the same internalReferenceNumber (sandbox idempotency)', async () => {
    const s = await sandbox();
    const registry = client(s.url);
    const xml = submitDdsRequestXml(dds('UG-REF-IDEMPOTENT-1'));
    const a = await registry.submit(xml, { internalReference: 'UG-REF-IDEMPOTENT-1' });
    const b = await registry.submit(xml, { internalReference: 'UG-REF-IDEMPOTENT-1' });
    const c = await registry.submit(submitDdsRequestXml(dds('UG-REF-IDEMPOTENT-2')), { internalReference: 'UG-REF-IDEMPOTENT-2' });
    expect(b.uuid).toBe(a.uuid);
    expect(c.uuid).not.toBe(a.uuid);
    expect(s.submissions()).toBe(3);
  });

  it('reports REJECTED with the reason rejectWhen gives', async () => {
    const s = await sandbox({
      availableAfterMs: 50,
      rejectWhen: (xml) => (xml.includes('Masaba Peter') ? 'EUDR_COMMODITIES_PRODUCER_GEO_INVALID: plot 2' : null),
    });
    const registry = client(s.url);
    const statement = dds();
    const { uuid } = await registry.submit(submitDdsRequestXml(statement), { internalReference: statement.internal_reference_number });
    await sleep(80);
    await expect(registry.status(uuid)).resolves.toEqual({
      status: 'REJECTED',
      rejection_reason: 'EUDR_COMMODITIES_PRODUCER_GEO_INVALID: plot 2',
    });
  });

  it('a wrong auth key is a FailedAuthentication fault → DdsRegistryRejectedError', async () => {
    const s = await sandbox();
    const statement = dds();
    const err = await rejection(
      client(s.url, { authKey: 'not-the-key' }).submit(submitDdsRequestXml(statement), {
        internalReference: statement.internal_reference_number,
      }),
    );
    expect(err.faultCode).toBe('wsse:FailedAuthentication');
    expect(err.message).toContain('could not be authenticated');
    expect(err.httpStatus).toBe(500);
    expect(s.submissions()).toBe(0);
  });

  it("accepts the UsernameToken of the soap package's WSSecurity, and refuses it with a wrong key", async () => {
    const s = await sandbox();
    const body = submitDdsRequestXml(dds('UG-REF-SOAP-WSSECURITY')).replace(/^<\?xml[^>]*\?>/, '');
    const envelope = (key: string) => {
      const security = new WSSecurity(USER, key, { passwordType: 'PasswordDigest', mustUnderstand: true, envelopeKey: 'soapenv' }).toXML();
      return (
        `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header>${security}` +
        `<v4:WebServiceClientId xmlns:v4="http://ec.europa.eu/sanco/tracesnt/base/v4">${CLIENT_ID}</v4:WebServiceClientId></soapenv:Header>` +
        `<soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`
      );
    };
    const post = (text: string) =>
      fetch(s.url, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${DDS_OPERATIONS.submitDds.soapAction}"` },
        body: text,
      }).then(async (r) => [r.status, await r.text()] as const);
    const [status, text] = await post(envelope(AUTH_KEY));
    expect(status).toBe(200);
    expect(text).toMatch(/SubmitDdsResponse/);
    const [refused, fault] = await post(envelope('not-the-key'));
    expect(refused).toBe(500);
    expect(fault).toContain('wsse:FailedAuthentication');
    expect(s.submissions()).toBe(1);
  });

  it('a replayed envelope (same nonce) and a Created older than 5 minutes are refused', async () => {
    const s = await sandbox();
    const creds = { username: USER, authKey: AUTH_KEY, clientId: CLIENT_ID };
    const post = (body: string) =>
      fetch(s.url, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${DDS_OPERATIONS.submitDds.soapAction}"` },
        body,
      }).then(async (r) => [r.status, await r.text()] as const);
    const env = buildDdsSoapEnvelope(submitDdsRequestXml(dds()), creds);
    expect((await post(env))[0]).toBe(200);
    const [status, text] = await post(env);
    expect(status).toBe(500);
    expect(text).toContain('wsse:FailedAuthentication');
    expect(text).toContain('nonce already used');

    const stale = await post(buildDdsSoapEnvelope(submitDdsRequestXml(dds()), creds, { created: new Date(Date.now() - 6 * 60_000) }));
    expect(stale[0]).toBe(500);
    expect(stale[1]).toContain('wsse:MessageExpired');
  });

  it('a schema-invalid body is a fault → DdsRegistryRejectedError naming the element', async () => {
    const s = await sandbox();
    const statement = dds();
    const bad = submitDdsRequestXml(statement).replace('<dds:hsHeading>0901</dds:hsHeading>', '<dds:hsHeading>coffee</dds:hsHeading>');
    expect(bad).toContain('>coffee<');
    const err = await rejection(client(s.url).submit(bad, { internalReference: statement.internal_reference_number }));
    expect(err.faultCode).toMatch(/:Client$/);
    expect(err.message).toMatch(/hsHeading/);
    expect(s.submissions()).toBe(0);
  });

  it('an unknown UUID is a NotFoundException fault → DdsRegistryRejectedError', async () => {
    const s = await sandbox();
    const err = await rejection(client(s.url).status('3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b'));
    expect(err.exception).toBe('NotFoundException');
    expect(err.errors[0]?.id).toBe('EUDR_API_NO_DDS');
  });

  it('refuses a body whose internalReferenceNumber is not the one given, before sending', async () => {
    const s = await sandbox();
    await expect(client(s.url).submit(submitDdsRequestXml(dds('REF-A')), { internalReference: 'REF-B' })).rejects.toThrow(TypeError);
    expect(s.submissions()).toBe(0);
  });

  it('the sandbox stopped → DdsRegistryUnavailableError', async () => {
    const s = await startDdsRegistrySandbox({ username: USER, authKey: AUTH_KEY });
    await s.stop();
    const statement = dds();
    const p = client(s.url).submit(submitDdsRequestXml(statement), { internalReference: statement.internal_reference_number });
    await expect(p).rejects.toBeInstanceOf(DdsRegistryUnavailableError);
    await expect(p).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('SoapDdsRegistry error mapping (stub fetch)', () => {
  const endpoint = 'https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt/ws/EUDRDueDiligenceStatementServiceV3';
  const uuid = '3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b';

  it('HTTP 503 without a SOAP body → Unavailable; a timeout → Unavailable', async () => {
    const html = client(endpoint, {
      fetchImpl: (async () => new Response('<html><body>Service Unavailable</body></html>', { status: 503 })) as typeof fetch,
    });
    await expect(html.status(uuid)).rejects.toThrow(DdsRegistryUnavailableError);

    const hang = ((_: unknown, init?: RequestInit) =>
      new Promise((_r, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)))) as typeof fetch;
    await expect(client(endpoint, { fetchImpl: hang, timeoutMs: 50 }).status(uuid)).rejects.toThrow(/unavailable: getDds: timeout/);
  });

  it('a business-rules fault (S:Server + BusinessRulesValidationException) → Rejected with the errors; a bare Server fault → Unavailable', async () => {
    const fault = (code: string, detail: string) =>
      `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><S:Fault><faultcode>${code}</faultcode><faultstring>Business rules validation failed</faultstring>${detail}</S:Fault></S:Body></S:Envelope>`;
    const business = `<detail><ns2:BusinessRulesValidationException xmlns:ns2="http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3" xmlns:ns4="http://ec.europa.eu/sanco/tracesnt/error/v01"><ns4:Error><ns4:ID>EUDR_COMMODITIES_HS_CODE_INVALID</ns4:ID><ns4:Message>The HS-Code of a commodity is invalid</ns4:Message><ns4:Field>hsHeading</ns4:Field></ns4:Error></ns2:BusinessRulesValidationException></detail>`;
    const answer = (body: string) =>
      (async () => new Response(body, { status: 500, headers: { 'content-type': 'text/xml' } })) as typeof fetch;
    const err = await rejection(client(endpoint, { fetchImpl: answer(fault('S:Server', business)) }).status(uuid));
    expect(err.exception).toBe('BusinessRulesValidationException');
    expect(err.errors).toEqual([
      { id: 'EUDR_COMMODITIES_HS_CODE_INVALID', message: 'The HS-Code of a commodity is invalid', field: 'hsHeading' },
    ]);
    expect(err.message).toContain('EUDR_COMMODITIES_HS_CODE_INVALID');
    await expect(client(endpoint, { fetchImpl: answer(fault('S:Server', '')) }).status(uuid)).rejects.toThrow(DdsRegistryUnavailableError);
  });

  it('maps the registry status words', () => {
    expect(toRegistryStatus({ status: 'GROUPED', referenceNumber: '26DEPDGY8NTUH2', verificationNumber: 'K7W2Q9XZ' })).toEqual({
      status: 'AVAILABLE',
      reference_number: '26DEPDGY8NTUH2',
      verification_number: 'K7W2Q9XZ',
      registry_status: 'GROUPED',
    });
    expect(toRegistryStatus({ status: 'AVAILABLE' })).toEqual({ status: 'SUBMITTED', registry_status: 'AVAILABLE' });
    expect(toRegistryStatus({ status: 'WITHDRAWN' })).toEqual({
      status: 'REJECTED',
      rejection_reason: 'DDS is WITHDRAWN in the EU Information System',
      registry_status: 'WITHDRAWN',
    });
  });

  it('refuses a plain-http endpoint outside loopback', () => {
    expect(() => client('http://eudr.example.eu/ws')).toThrow(/https/);
  });
});
