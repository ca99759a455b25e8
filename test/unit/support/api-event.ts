import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { callerToContext, type Caller } from '../../../shared/auth/claims';

/** Hand-made API Gateway proxy events and Lambda context for calling middy handlers directly. */

export const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export const ADMIN: Caller = { sub: 'admin-1', role: 'ADMIN', duties: [] };
export const coop = (cooperativeId: string): Caller => ({
  sub: `coop-user-${cooperativeId}`,
  role: 'COOPERATIVE',
  cooperative_id: cooperativeId,
  duties: ['QUALITY_OFFICER', 'MILL_OPERATOR', 'WAREHOUSE_MANAGER', 'EXPORTER', 'MANAGER'],
});
export const agent = (cooperativeId: string): Caller => ({ sub: 'agent-1', role: 'AGENT', cooperative_id: cooperativeId, duties: [] });
export const mfi = (mfiId: string): Caller => ({ sub: 'mfi-user-1', role: 'MFI', mfi_id: mfiId, duties: [] });

export interface EventInput {
  method?: string;
  path?: string;
  resource?: string;
  /** The verified caller; null means no authorizer context at all. */
  caller?: Caller | null;
  /** A JSON-serialisable body, or a raw string sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
}

export function apiEvent(input: EventInput = {}): APIGatewayProxyEvent {
  const method = input.method ?? 'POST';
  const path = input.path ?? '/test';
  const body = input.body === undefined ? null : typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
  const headers = { 'content-type': 'application/json', ...(input.headers ?? {}) };
  return {
    body,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    httpMethod: method,
    isBase64Encoded: false,
    path,
    pathParameters: input.pathParameters ?? null,
    queryStringParameters: input.query ?? null,
    multiValueQueryStringParameters: input.query ? Object.fromEntries(Object.entries(input.query).map(([k, v]) => [k, [v]])) : null,
    stageVariables: null,
    resource: input.resource ?? path,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api1',
      authorizer: input.caller ? callerToContext(input.caller) : null,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '127.0.0.1',
        user: null,
        userAgent: 'jest',
        userArn: null,
      },
      path,
      stage: 'local',
      requestId: 'req-1',
      requestTimeEpoch: 0,
      resourceId: 'res1',
      resourcePath: input.resource ?? path,
    },
  };
}

export function lambdaContext(): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'unit-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:unit-test',
    memoryLimitInMB: '512',
    awsRequestId: 'aws-req-1',
    logGroupName: '/aws/lambda/unit-test',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

export function parse(result: { statusCode: number; headers?: Record<string, unknown>; body: string }): ParsedResponse {
  return { status: result.statusCode, headers: (result.headers ?? {}) as Record<string, string>, body: JSON.parse(result.body) };
}

/**
 * Asserts the service's error envelope (docs/api/conventions.md#http-and-errors): code, message, docs URL under
 * DOCS_BASE_URL and a ULID request_id equal to the x-request-id header.
 */
export function expectErrorEnvelope(res: ParsedResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  const err = res.body.error as Record<string, unknown>;
  expect(typeof err.message).toBe('string');
  expect((err.message as string).length).toBeGreaterThan(0);
  expect(err.docs).toBe(`${process.env.DOCS_BASE_URL}/errors#${code}`);
  expect(err.request_id).toMatch(ULID_RE);
  expect(res.headers['x-request-id']).toBe(err.request_id);
}
