/**
 * The REST API: one method per manifest route (shared/manifest.ts), the shared JWT REQUEST
 * authorizer on `jwt` routes, and gateway responses that answer API Gateway's own errors (no
 * route, bad token, throttled, too large) in the service's error envelope (docs/api/conventions.md#http-and-errors).
 */
import { Aws, CfnCondition, Duration, Fn, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  AwsIntegration,
  EndpointType,
  IdentitySource,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  type IntegrationConfig,
  type Method,
} from 'aws-cdk-lib/aws-apigateway';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ERROR_CODES } from '../../shared/http/error-codes';
import { BASE_SECURITY_HEADERS, HSTS } from '../../shared/http/security-headers';
import type { ErrorCode } from '../../shared/domain/errors';
import type { RouteDef } from '../../shared/manifest';
import { THROTTLE } from './rate-limits';

/** The API's single stage. */
export const STAGE_NAME = 'prod';

/** A gateway response in the error envelope. */
interface EnvelopeResponse {
  type: ResponseType;
  status: number;
  code: ErrorCode;
  headers?: Record<string, string>;
}

/**
 * API Gateway's own errors → envelope. ACCESS_DENIED is what an authorizer Deny gives: ours denies
 * only bad tokens, so it is 401 like a missing token. MISSING_AUTHENTICATION_TOKEN is API
 * Gateway's answer to an unknown route.
 */
export const GATEWAY_ERRORS: readonly EnvelopeResponse[] = [
  { type: ResponseType.UNAUTHORIZED, status: 401, code: 'UNAUTHORIZED' },
  { type: ResponseType.ACCESS_DENIED, status: 401, code: 'UNAUTHORIZED' },
  { type: ResponseType.AUTHORIZER_FAILURE, status: 401, code: 'UNAUTHORIZED' },
  { type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR, status: 401, code: 'UNAUTHORIZED' },
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, status: 404, code: 'ROUTE_NOT_FOUND' },
  { type: ResponseType.RESOURCE_NOT_FOUND, status: 404, code: 'ROUTE_NOT_FOUND' },
  { type: ResponseType.REQUEST_TOO_LARGE, status: 413, code: 'PAYLOAD_TOO_LARGE' },
  { type: ResponseType.UNSUPPORTED_MEDIA_TYPE, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { type: ResponseType.THROTTLED, status: 429, code: 'RATE_LIMITED', headers: { 'Retry-After': "'1'" } },
  { type: ResponseType.DEFAULT_4XX, status: 400, code: 'VALIDATION_ERROR' },
  { type: ResponseType.DEFAULT_5XX, status: 500, code: 'INTERNAL_ERROR' },
];

/** The envelope body of a gateway response; `$context.requestId` is filled in by API Gateway. */
function envelopeTemplate(code: ErrorCode, docsBaseUrl: string): string {
  return `{"error":{"code":"${code}","message":${JSON.stringify(ERROR_CODES[code].title)},"docs":"${docsBaseUrl}/errors#${code}","request_id":"$context.requestId"}}`;
}

/** Props of {@link ServiceApi}. */
export interface ServiceApiProps {
  /** Parameter value of DocsBaseUrl; empty = `<public base URL>/docs`. */
  docsBaseUrlParam: string;
  /** Parameter value of PublicBaseUrl; empty = this API's own stage URL. */
  publicBaseUrlParam: string;
}

/** RestApi with its stage, access log, gateway responses; routes are added by {@link addRoutes}. */
export class ServiceApi extends Construct {
  readonly api: RestApi;
  /** Base of `error.docs` links: the DocsBaseUrl parameter, or `{@link publicBaseUrl}/docs`. */
  readonly docsBaseUrl: string;
  /**
   * Base of every absolute link the service prints (PUBLIC_BASE_URL): the PublicBaseUrl parameter
   * (a custom domain, https), or this API's execute-api stage URL.
   */
  readonly publicBaseUrl: string;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.ONE_MONTH });

    this.api = new RestApi(this, 'Api', {
      restApiName: 'coffee-trace',
      description: 'Coffee batch traceability and farmer payouts',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: true,
      deployOptions: {
        stageName: STAGE_NAME,
        throttlingRateLimit: THROTTLE.rateLimit,
        throttlingBurstLimit: THROTTLE.burstLimit,
        tracingEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false, // bodies carry phone numbers: never log them
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            extendedRequestId: '$context.extendedRequestId',
            requestTime: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            httpMethod: '$context.httpMethod',
            resourcePath: '$context.resourcePath',
            path: '$context.path',
            status: '$context.status',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationStatus: '$context.integrationStatus',
            principalId: '$context.authorizer.principalId',
            authorizerError: '$context.authorizer.error',
            errorType: '$context.error.responseType',
            xrayTraceId: '$context.xrayTraceId',
          }),
        ),
      },
    });

    // The stack outputs the URL itself (ApiUrl); drop RestApi's automatic duplicate.
    this.api.node.tryRemoveChild('Endpoint');

    // Computed from the API's id and the literal stage name, not from the Stage: functions that
    // are the API's integrations can hold it without a dependency cycle.
    const ownBase = `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${STAGE_NAME}`;
    const useOwnBase = new CfnCondition(this, 'UseOwnPublicBaseUrl', { expression: Fn.conditionEquals(props.publicBaseUrlParam, '') });
    this.publicBaseUrl = Fn.conditionIf(useOwnBase.logicalId, ownBase, props.publicBaseUrlParam).toString();
    const useOwn = new CfnCondition(this, 'UseOwnDocsUrl', { expression: Fn.conditionEquals(props.docsBaseUrlParam, '') });
    this.docsBaseUrl = Fn.conditionIf(useOwn.logicalId, Fn.join('', [this.publicBaseUrl, '/docs']), props.docsBaseUrlParam).toString();

    // API Gateway's own answers carry the security headers every handler's answer carries (static values, quoted).
    const securityHeaders = Object.fromEntries(
      Object.entries({ ...BASE_SECURITY_HEADERS, 'strict-transport-security': HSTS }).map(([k, v]) => [k, `'${v}'`]),
    );
    for (const r of GATEWAY_ERRORS) {
      this.api.addGatewayResponse(`${r.type.responseType}Response`, {
        type: r.type,
        statusCode: String(r.status),
        responseHeaders: { ...securityHeaders, ...r.headers },
        templates: { 'application/json': envelopeTemplate(r.code, this.docsBaseUrl) },
      });
    }

    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          "Requests are validated in each handler with valibot (the same schemas produce the OpenAPI document), which also answers in the service's error envelope with error.details; API Gateway validators could not.",
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Tokens come from an external OIDC issuer (docs/security.md#tokens-and-roles) and are verified by the custom JWT REQUEST authorizer (jose, asymmetric algorithms, pinned issuer and audience), not a Cognito user pool. Webhook and public routes are covered by their own APIG4 acknowledgements.',
      },
    );
    // AwsSolutions-APIG3 needs no acknowledgement: the stack associates a WAFv2 web ACL with the stage (infra/stack/waf.ts).
    const cwRole = this.api.node.tryFindChild('CloudWatchRole');
    if (cwRole) {
      Validations.of(cwRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-level CloudWatch role, required for stage access and execution logs; AWS's own service-role policy is the documented one for it.",
      });
    }
  }

  /**
   * Adds one method per route, integrated (proxy) with `fnFor(route.fn)`; `jwt` routes use the
   * REQUEST authorizer (Authorization header, no result caching), others AuthorizationType NONE.
   * Each route's invoke permission is created in `permissionScope` (a nested stack: see
   * {@link LambdaProxyIntegration}).
   * @throws Error when a route's function is missing.
   */
  addRoutes(
    routes: readonly RouteDef[],
    fnFor: (fn: string) => IFunction | undefined,
    authorizerFn: IFunction,
    permissionScope: Construct,
  ): void {
    const authorizer = new RequestAuthorizer(this, 'JwtAuthorizer', {
      handler: authorizerFn,
      identitySources: [IdentitySource.header('Authorization')],
      // Tokens carry per-request claims; caching a policy per token is not worth the staleness risk.
      resultsCacheTtl: Duration.seconds(0),
    });
    for (const route of routes) {
      const fn = fnFor(route.fn);
      if (!fn) throw new Error(`No function ${route.fn} for ${route.method} ${route.path}`);
      const method = this.api.root
        .resourceForPath(route.path)
        .addMethod(
          route.method,
          new LambdaProxyIntegration(fn, permissionScope),
          route.auth === 'jwt'
            ? { authorizer, authorizationType: AuthorizationType.CUSTOM }
            : { authorizationType: AuthorizationType.NONE },
        );
      if (route.auth !== 'jwt') {
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            route.auth === 'webhook'
              ? `${route.method} ${route.path} is called by the provider, which holds no JWT: the handler verifies the Standard Webhooks signature (docs/api/inbound-webhooks.md#payout-provider-webhook) and answers 401 INVALID_SIGNATURE.`
              : `${route.method} ${route.path} is public documentation (docs/api/conventions.md#http-and-errors: error.docs links must open without a token).`,
        });
      }
    }
  }

  /** Public URL of a route on the prod stage. */
  urlOf(path: string): string {
    return `${this.api.url}${path.replace(/^\//, '')}`;
  }
}

/**
 * A Lambda proxy integration, the same integration as CDK's `LambdaIntegration` (AWS_PROXY, POST
 * to the function's `invocations` path; test invocations not allowed), whose invoke permission
 * (`AWS::Lambda::Permission`: API Gateway may invoke the function for this method and path on
 * the `prod` stage) is created in `permissionScope` instead of beside the method. The service
 * puts those permissions, one per route, in a nested stack (infra/stack/coffee-trace-stack.ts
 * `Triggers`) to keep the main template far from CloudFormation's 500 resources; the nested
 * stack receives the function ARNs and the API id as parameters.
 */
class LambdaProxyIntegration extends AwsIntegration {
  constructor(
    private readonly handler: IFunction,
    private readonly permissionScope: Construct,
  ) {
    super({ proxy: true, service: 'lambda', path: `2015-03-31/functions/${handler.functionArn}/invocations` });
  }

  override bind(method: Method): IntegrationConfig {
    const config = super.bind(method);
    const path = method.resource.path;
    this.handler.addPermission(`ApiPermission.${method.httpMethod}${path.replace(/\//g, '.')}`, {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      scope: this.permissionScope,
      // Method.methodArn with the literal stage name: no reference to the Stage, whose deployment waits for the methods.
      sourceArn: method.api.arnForExecuteApi(method.httpMethod, path.replace(/\{[^}]*\}/g, '*'), STAGE_NAME),
    });
    return config;
  }
}
