/**
 * Local sandbox of the EU Information System's DDS service V3 (docs/api/eudr.md#due-diligence-statements): SOAP 1.1 on a
 * loopback port, in memory, speaking the protocol `SoapDdsRegistry` speaks to the real service
 * (envelope, SOAPAction, WS-Security UsernameToken PasswordDigest, WebServiceClientId, faults).
 *
 * Endpoint: `POST <url>` (`/tracesnt/ws/EUDRDueDiligenceStatementServiceV3`), operations
 * `submitDds` (`dds:SubmitDdsRequest` → `dds:SubmitDdsResponse/uuid`) and `getDds`
 * (`dds:GetDdsRequest/uuidList` → `dds:GetDdsResponse/ddsOverviewList`). Faults (HTTP 500):
 * - `wsse:InvalidSecurity` / `wsse:UnsupportedSecurityToken`: no usable UsernameToken;
 *   `wsse:FailedAuthentication`: unknown user, wrong digest, or a nonce already used;
 *   `wsse:MessageExpired`: `Created` more than 5 minutes old (or ahead), or the Timestamp expired.
 * - `S:Client`: no WebServiceClientId, SOAPAction not matching the body, unknown operation, or a
 *   SubmitDdsRequest that fails the V3 XSD (faultstring: the validator's messages).
 * - `S:Server` + `detail/NotFoundException` (`EUDR_API_NO_DDS`): getDds, amendDds or withdrawDds for an unknown UUID.
 * - `S:Server` + `detail/BusinessRulesValidationException`: amendDds / withdrawDds more than
 *   `amendmentWindowMs` (72 h) after submission (`EUDR_API_AMENDMENT_PERIOD_EXPIRED`), on a DDS not
 *   AVAILABLE (`EUDR_API_DDS_NOT_AVAILABLE`), or locked for customs (`EUDR_API_DDS_LOCKED`: see `lockWhen`).
 *
 * `amendDds` (`dds:AmendDdsRequest{uuid, statement}`, the statement validated against the V3 XSD)
 * makes the DDS SUBMITTED again for `availableAfterMs`, then AVAILABLE with the same reference and
 * verification numbers (its overview's `version` counts the changes); `withdrawDds`
 * (`dds:WithdrawDdsRequest{uuid}`) makes it WITHDRAWN. Both answer `{uuid, status}`.
 *
 * A DDS is SUBMITTED for `availableAfterMs`, then AVAILABLE with a reference number
 * `<yy><country of activity><10 × A–Z0–9>` (e.g. `26DEPDGY8NTUH2`) and an 8-character verification
 * number, or REJECTED with the reason `rejectWhen(xml)` returned at submission.
 *
 * Idempotency (sandbox only): a second submission with the same internalReferenceNumber answers
 * the first UUID. The real registry would create a second DDS; our filing submits each DDS once.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { builder, create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces';
import { EUDR_COMMON_NS, EUDR_DDS_NS } from '../../shared/adapters/eudr/submit-dds-xml';
import {
  DDS_OPERATIONS,
  PASSWORD_DIGEST_TYPE,
  SOAP_ENV_NS,
  TRACES_BASE_V4_NS,
  TRACES_ERROR_NS,
  WSSE_NS,
  WSU_NS,
  childElement,
  childElements,
  childText,
  readSoapEnvelope,
  wsPasswordDigest,
  type XmlNode,
} from '../../shared/adapters/eudr/soap-dds-registry';
import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import { listenOnLoopback, readBoundedBody } from './loopback';

/** Options of {@link startDdsRegistrySandbox}. */
export interface DdsRegistrySandboxOptions {
  /** TCP port on 127.0.0.1; 0 or absent picks a free one. */
  port?: number;
  /** The one accepted user and its authentication key. */
  username: string;
  authKey: string;
  /** Required WebServiceClientId value; absent: any non-empty value. */
  clientId?: string;
  /** How long a DDS stays SUBMITTED, ms (default 1500). */
  availableAfterMs?: number;
  /** Called with each accepted SubmitDdsRequest XML; a string makes that DDS REJECTED with it as the reason. */
  rejectWhen?: (xml: string) => string | null;
  /**
   * Called with each accepted statement (submitted or amended); true makes the DDS locked for
   * customs once AVAILABLE, so amendDds and withdrawDds are refused. Default: a statement whose
   * description of goods contains `CUSTOMS-LOCK` (the local stack's test hook).
   */
  lockWhen?: (xml: string) => boolean;
  /** How long after submission amendDds and withdrawDds are allowed, ms (default 72 hours). */
  amendmentWindowMs?: number;
  log?: (line: string) => void;
}

/** A running sandbox. */
export interface DdsRegistrySandbox {
  /** The service endpoint, `http://127.0.0.1:<port>/tracesnt/ws/EUDRDueDiligenceStatementServiceV3`. */
  url: string;
  /** Closes the server and its connections. */
  stop(): Promise<void>;
  /** SubmitDdsRequest calls accepted so far (authenticated and schema-valid), repeats included. */
  submissions(): number;
  /** amendDds and withdrawDds calls accepted so far. */
  modifications(): { amended: number; withdrawn: number };
}

interface StoredDds {
  uuid: string;
  internalReference: string;
  submittedAtMs: number;
  /** Last submission or amendment: the DDS is SUBMITTED for `availableAfterMs` after it. */
  changedAtMs: number;
  locked: boolean;
  withdrawn: boolean;
  version: number;
  referenceNumber: string;
  verificationNumber: string;
  rejectionReason: string | null;
}

/** A fault to answer: code (a QName text), message, and optionally a service exception detail. */
class Fault extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly detail?: { exception: string; errors: Array<{ id: string; message: string; field: string }> },
  ) {
    super(message);
  }
}

const SERVICE_PATH = '/tracesnt/ws/EUDRDueDiligenceStatementServiceV3';
const FRESHNESS_MS = 5 * 60_000;
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function randomAlnum(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALNUM[randomInt(ALNUM.length)];
  return s;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Response envelope with `fill` building the body content (prefix `S`, as JAX-WS answers). */
function envelope(fill: (body: XMLBuilder) => void): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' });
  fill(doc.ele(SOAP_ENV_NS, 'S:Envelope').ele(SOAP_ENV_NS, 'S:Body'));
  return doc.end({ prettyPrint: false });
}

function faultXml(f: Fault): string {
  return envelope((body) => {
    const fault = body.ele(SOAP_ENV_NS, 'S:Fault');
    const code = fault.ele('faultcode');
    if (f.code.startsWith('wsse:')) code.att('http://www.w3.org/2000/xmlns/', 'xmlns:wsse', WSSE_NS);
    code.txt(f.code);
    fault.ele('faultstring').txt(f.message);
    if (f.detail) {
      const ex = fault.ele('detail').ele(EUDR_DDS_NS, `ns2:${f.detail.exception}`);
      for (const e of f.detail.errors) {
        const err = ex.ele(TRACES_ERROR_NS, 'ns4:Error');
        err.ele(TRACES_ERROR_NS, 'ns4:ID').txt(e.id);
        err.ele(TRACES_ERROR_NS, 'ns4:Message').txt(e.message);
        err.ele(TRACES_ERROR_NS, 'ns4:Field').txt(e.field);
      }
    }
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return readBoundedBody(req, MAX_BODY_BYTES, () => new Fault('S:Client', `request larger than ${MAX_BODY_BYTES} bytes`));
}

/**
 * Starts the sandbox on 127.0.0.1.
 * @returns the running sandbox (endpoint URL, stop, submission count)
 * @throws the listen error when the port is taken
 */
export async function startDdsRegistrySandbox(opts: DdsRegistrySandboxOptions): Promise<DdsRegistrySandbox> {
  const availableAfterMs = opts.availableAfterMs ?? 1500;
  const amendmentWindowMs = opts.amendmentWindowMs ?? 72 * 3600_000;
  const lockWhen = opts.lockWhen ?? ((xml: string) => /<[\w:]*descriptionOfGoods>[^<]*CUSTOMS-LOCK/.test(xml));
  const log = opts.log ?? (() => {});
  const byUuid = new Map<string, StoredDds>();
  const byInternalRef = new Map<string, StoredDds>();
  /** Nonces seen, with the time they may be forgotten (their Created is then too old anyway). */
  const nonces = new Map<string, number>();
  let accepted = 0;
  let amended = 0;
  let withdrawn = 0;

  /** Checks the wsse:Security header; records the nonce. @throws Fault */
  function authenticate(header: XmlNode | null): void {
    const security = header && childElement(header, 'Security', WSSE_NS);
    const token = security && childElement(security, 'UsernameToken', WSSE_NS);
    if (!security || !token)
      throw new Fault('wsse:InvalidSecurity', 'An error was discovered processing the <wsse:Security> header: no UsernameToken');
    const username = childText(token, 'Username', WSSE_NS);
    const passwordEl = childElement(token, 'Password', WSSE_NS);
    const nonce = childText(token, 'Nonce', WSSE_NS);
    const created = childText(token, 'Created', WSU_NS);
    if (!username || !passwordEl || !nonce || !created) {
      throw new Fault('wsse:InvalidSecurity', 'UsernameToken needs Username, Password, Nonce and wsu:Created');
    }
    const type = (passwordEl as unknown as { getAttribute(n: string): string | null }).getAttribute('Type');
    if (type !== PASSWORD_DIGEST_TYPE) throw new Fault('wsse:UnsupportedSecurityToken', 'Only PasswordDigest passwords are accepted');

    const nonceBytes = Buffer.from(nonce, 'base64');
    const expected = wsPasswordDigest(nonceBytes, created, opts.authKey);
    if (username !== opts.username || !safeEqual((passwordEl.textContent ?? '').trim(), expected)) {
      throw new Fault('wsse:FailedAuthentication', 'The security token could not be authenticated or authorized');
    }
    const createdMs = Date.parse(created);
    const now = Date.now();
    if (!Number.isFinite(createdMs)) throw new Fault('wsse:InvalidSecurity', `wsu:Created is not a dateTime: ${created}`);
    if (now - createdMs > FRESHNESS_MS || createdMs - now > FRESHNESS_MS) {
      throw new Fault('wsse:MessageExpired', `The message has expired: wsu:Created ${created} is more than 5 minutes from now`);
    }
    const timestamp = childElement(security, 'Timestamp', WSU_NS);
    const expires = timestamp && childText(timestamp, 'Expires', WSU_NS);
    if (expires && Date.parse(expires) < now) throw new Fault('wsse:MessageExpired', `The message has expired: wsu:Expires ${expires}`);

    for (const [n, until] of nonces) if (until < now) nonces.delete(n);
    if (nonces.has(nonce))
      throw new Fault('wsse:FailedAuthentication', 'The security token could not be authenticated or authorized: nonce already used');
    nonces.set(nonce, createdMs + 2 * FRESHNESS_MS);
  }

  async function submitDds(request: XmlNode): Promise<string> {
    // The body element alone, with the namespace declarations it needs (`never`: xmlbuilder2's own DOM Node type).
    const xml = builder(request as never).toString();
    const { valid, errors } = await validateSubmitDdsRequest(xml);
    if (!valid) throw new Fault('S:Client', `XML schema validation failed: ${errors.join('; ')}`);
    accepted++;

    const statement = childElement(request, 'statement', EUDR_DDS_NS)!;
    const internalReference = childText(statement, 'internalReferenceNumber', EUDR_DDS_NS);
    const existing = internalReference !== undefined ? byInternalRef.get(internalReference) : undefined;
    if (existing) {
      log(`dds-registry-sandbox submitDds ${internalReference} → ${existing.uuid} (same internal reference, same UUID)`);
      return submitResponse(existing.uuid);
    }
    const country = (
      childText(statement, 'countryOfActivity', EUDR_DDS_NS) ||
      childText(statement, 'borderCrossCountry', EUDR_DDS_NS) ||
      'EU'
    ).toUpperCase();
    const uuid = randomUUID();
    const dds: StoredDds = {
      uuid,
      internalReference: internalReference ?? `SANDBOX-${uuid.slice(0, 8).toUpperCase()}`,
      submittedAtMs: Date.now(),
      changedAtMs: Date.now(),
      locked: lockWhen(xml),
      withdrawn: false,
      version: 1,
      referenceNumber: `${String(new Date().getUTCFullYear() % 100).padStart(2, '0')}${country}${randomAlnum(10)}`,
      verificationNumber: randomAlnum(8),
      rejectionReason: opts.rejectWhen?.(xml) ?? null,
    };
    byUuid.set(uuid, dds);
    byInternalRef.set(dds.internalReference, dds);
    log(`dds-registry-sandbox submitDds ${dds.internalReference} → ${uuid}${dds.rejectionReason ? ' (will be REJECTED)' : ''}`);
    return submitResponse(uuid);
  }

  function submitResponse(uuid: string): string {
    return envelope((body) => body.ele(EUDR_DDS_NS, `ns2:${DDS_OPERATIONS.submitDds.response}`).ele(EUDR_DDS_NS, 'ns2:uuid').txt(uuid));
  }

  function getDds(request: XmlNode): string {
    const uuids = childElements(request, 'uuidList', EUDR_DDS_NS).map((e) => (e.textContent ?? '').trim().toLowerCase());
    if (uuids.length === 0 || uuids.length > 100) throw new Fault('S:Client', 'GetDdsRequest needs 1 to 100 uuidList elements');
    const found = uuids.map((u) => byUuid.get(u));
    const missing = uuids.filter((_, i) => !found[i]);
    if (missing.length) {
      throw new Fault('S:Server', 'No DDS corresponding to the provided UUID.', {
        exception: 'NotFoundException',
        errors: missing.map((u) => ({
          id: 'EUDR_API_NO_DDS',
          message: `No DDS corresponding to the provided UUID ${u}.`,
          field: 'uuidList',
        })),
      });
    }
    const now = Date.now();
    return envelope((body) => {
      const res = body
        .ele(EUDR_DDS_NS, `ns2:${DDS_OPERATIONS.getDds.response}`)
        .att('http://www.w3.org/2000/xmlns/', 'xmlns:ns3', EUDR_COMMON_NS);
      for (const dds of found as StoredDds[]) {
        const o = res.ele(EUDR_DDS_NS, 'ns2:ddsOverviewList');
        const c = (name: string, text: string) => o.ele(EUDR_COMMON_NS, `ns3:${name}`).txt(text);
        c('uuid', dds.uuid);
        c('internalReferenceNumber', dds.internalReference);
        const status = statusOf(dds, now);
        // The numbers stay once given: an amended DDS keeps its reference number while it is re-checked.
        if (status === 'AVAILABLE' || status === 'WITHDRAWN' || (status === 'SUBMITTED' && dds.version > 1)) {
          c('referenceNumber', dds.referenceNumber);
          c('verificationNumber', dds.verificationNumber);
        }
        c('status', status);
        if (status === 'REJECTED' && dds.rejectionReason) c('rejectionReason', dds.rejectionReason.slice(0, 1000));
        c('date', new Date(dds.submittedAtMs).toISOString());
        o.ele(EUDR_COMMON_NS, 'ns3:version').txt(String(dds.version));
      }
    });
  }

  /** SUBMITTED for `availableAfterMs` after the last change, then AVAILABLE or REJECTED; WITHDRAWN once withdrawn. */
  function statusOf(dds: StoredDds, now: number): 'SUBMITTED' | 'AVAILABLE' | 'REJECTED' | 'WITHDRAWN' {
    if (dds.withdrawn) return 'WITHDRAWN';
    if (now - dds.changedAtMs < availableAfterMs) return 'SUBMITTED';
    return dds.rejectionReason ? 'REJECTED' : 'AVAILABLE';
  }

  /** The stored DDS of a modification request, checked: known, AVAILABLE, within the window, not locked. @throws Fault */
  function modifiable(request: XmlNode, operation: string): StoredDds {
    const uuid = (childText(request, 'uuid', EUDR_DDS_NS) ?? '').toLowerCase();
    const dds = byUuid.get(uuid);
    const refuse = (id: string, message: string, exception = 'BusinessRulesValidationException') =>
      new Fault('S:Server', message, { exception, errors: [{ id, message, field: 'uuid' }] });
    if (!dds) throw refuse('EUDR_API_NO_DDS', `No DDS corresponding to the provided UUID ${uuid}.`, 'NotFoundException');
    const now = Date.now();
    if (now - dds.submittedAtMs > amendmentWindowMs) {
      throw refuse('EUDR_API_AMENDMENT_PERIOD_EXPIRED', `${operation}: the 72-hour amendment period of DDS ${uuid} has expired.`);
    }
    if (statusOf(dds, now) !== 'AVAILABLE')
      throw refuse('EUDR_API_DDS_NOT_AVAILABLE', `${operation}: DDS ${uuid} is not in available status.`);
    if (dds.locked) throw refuse('EUDR_API_DDS_LOCKED', `${operation}: DDS ${uuid} is locked (used for customs clearance).`);
    return dds;
  }

  function modificationResponse(operation: 'amendDds' | 'withdrawDds', dds: StoredDds, status: string): string {
    return envelope((body) => {
      const res = body.ele(EUDR_DDS_NS, `ns2:${DDS_OPERATIONS[operation].response}`);
      res.ele(EUDR_DDS_NS, 'ns2:uuid').txt(dds.uuid);
      res.ele(EUDR_DDS_NS, 'ns2:status').txt(status);
    });
  }

  /** amendDds: the statement validated as a SubmitDdsRequest would be; the DDS SUBMITTED again, same reference number. */
  async function amendDds(request: XmlNode): Promise<string> {
    const dds = modifiable(request, 'amendDds');
    const statement = childElement(request, 'statement', EUDR_DDS_NS);
    if (!statement) throw new Fault('S:Client', 'AmendDdsRequest needs a statement');
    const submit = create({ version: '1.0', encoding: 'UTF-8' })
      .ele(EUDR_DDS_NS, `dds:${DDS_OPERATIONS.submitDds.request}`)
      .att('http://www.w3.org/2000/xmlns/', 'xmlns:eudrCommon', EUDR_COMMON_NS);
    submit.ele(EUDR_DDS_NS, 'dds:operatorRole').txt('OPERATOR');
    submit.import(builder(statement as never));
    const xml = submit.end();
    const { valid, errors } = await validateSubmitDdsRequest(xml);
    if (!valid) throw new Fault('S:Client', `XML schema validation failed: ${errors.join('; ')}`);
    dds.changedAtMs = Date.now();
    dds.version++;
    dds.locked = lockWhen(xml);
    dds.rejectionReason = opts.rejectWhen?.(xml) ?? null;
    amended++;
    log(`dds-registry-sandbox amendDds ${dds.uuid} → version ${dds.version}, same reference number ${dds.referenceNumber}`);
    return modificationResponse('amendDds', dds, 'SUBMITTED');
  }

  function withdrawDds(request: XmlNode): string {
    const dds = modifiable(request, 'withdrawDds');
    dds.withdrawn = true;
    withdrawn++;
    log(`dds-registry-sandbox withdrawDds ${dds.uuid} → WITHDRAWN`);
    return modificationResponse('withdrawDds', dds, 'WITHDRAWN');
  }

  async function handle(req: IncomingMessage): Promise<[number, string]> {
    const text = await readBody(req);
    const soap = readSoapEnvelope(text);
    if (!soap?.payload) throw new Fault('S:Client', 'The request is not a SOAP 1.1 envelope with a body element');
    authenticate(soap.header);
    const clientId = soap.header ? childText(soap.header, 'WebServiceClientId', TRACES_BASE_V4_NS) : undefined;
    if (!clientId) throw new Fault('S:Client', 'Missing WebServiceClientId header');
    if (opts.clientId !== undefined && clientId !== opts.clientId) throw new Fault('S:Client', `Unknown WebServiceClientId ${clientId}`);

    const payload = soap.payload;
    const entry = Object.entries(DDS_OPERATIONS).find(([, op]) => payload.localName === op.request && payload.namespaceURI === EUDR_DDS_NS);
    if (!entry) throw new Fault('S:Client', `Cannot find dispatch method for {${payload.namespaceURI ?? ''}}${payload.localName}`);
    const [name, op] = entry;
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    if (action && action !== op.soapAction)
      throw new Fault('S:Client', `SOAPAction ${action} does not match the body element ${op.request}`);
    if (name === 'submitDds') return [200, await submitDds(payload)];
    if (name === 'amendDds') return [200, await amendDds(payload)];
    if (name === 'withdrawDds') return [200, withdrawDds(payload)];
    return [200, getDds(payload)];
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== SERVICE_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('Method not allowed');
      return;
    }
    handle(req)
      .catch((err: unknown): [number, string] => {
        const fault = err instanceof Fault ? err : new Fault('S:Server', `Internal error: ${(err as Error)?.message ?? String(err)}`);
        log(`dds-registry-sandbox fault ${fault.code}: ${fault.message}`);
        return [500, faultXml(fault)];
      })
      .then(([status, xml]) => {
        if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/xml; charset=utf-8' }).end(xml);
      });
  });

  const listening = await listenOnLoopback(server, opts.port ?? 0);
  const url = `http://127.0.0.1:${listening.port}${SERVICE_PATH}`;
  log(`dds-registry-sandbox listening on ${url} (available after ${availableAfterMs} ms)`);

  return {
    url,
    submissions: () => accepted,
    modifications: () => ({ amended, withdrawn }),
    stop: () => listening.close(),
  };
}
