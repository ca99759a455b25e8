/**
 * Per-caller rate limits in AWS (docs/deploy.md#rate-limits-in-aws): a REGIONAL WAFv2 web ACL on the API
 * stage. The numbers come from infra/stack/rate-limits.ts. The stage throttle (4× the per-token
 * rate) is only the outer wall shared by everyone; these rules make one noisy caller wait without
 * slowing the others:
 * - `PerToken`: on every non-webhook route, a rate-based rule whose custom aggregation key is the
 *   `Authorization` header with its whitespace normalised ({@link TOKEN_KEY_TRANSFORMATIONS}), so
 *   padding the header (extra or other whitespace around or inside it) does not open a fresh
 *   bucket: {@link PER_TOKEN_LIMIT} requests per {@link WINDOW_SECONDS} s window per token.
 *   Requests without the header are not counted by it (WAF skips a rate-based rule whose key is
 *   missing); the per-IP rules and the stage throttle cover them.
 * - `PublicPerIp`: on the unauthenticated public routes (the manifest's `public` routes: /trace,
 *   /ipfs, /docs, /openapi.json), per source IP: {@link PUBLIC_PER_IP_LIMIT} requests per window.
 * - `WebhookPerIp`: on `/api/webhooks/*` (providers hold no token), per source IP:
 *   {@link WEBHOOK_PER_IP_LIMIT} requests per window; the senders retry a 429 on the Standard
 *   Webhooks schedule, so a burst above it is delayed, not lost.
 * A blocked request is answered 429 in the service's error envelope (RATE_LIMITED, with `docs`)
 * and `Retry-After: 60` (the evaluation window). WAF answers before API Gateway, so the body has
 * no `request_id` (WAF responses are static).
 */
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { ERROR_CODES } from '../../shared/http/error-codes';
import { routes as manifestRoutes, type RouteDef } from '../../shared/manifest';
import { STAGE_NAME } from './http-api';
import { PER_TOKEN_LIMIT, PUBLIC_PER_IP_LIMIT, WEBHOOK_PER_IP_LIMIT, WINDOW_SECONDS } from './rate-limits';

export { PER_TOKEN_LIMIT, PUBLIC_PER_IP_LIMIT, WEBHOOK_PER_IP_LIMIT };

/** `Retry-After` of WAF's 429: the length of the window, after which the rate is re-evaluated. */
const RETRY_AFTER_SECONDS = WINDOW_SECONDS;

/**
 * URI paths of the inbound webhook routes as WAF sees them: `/prod/api/webhooks/…` on the
 * execute-api URL, `/api/webhooks/…` (or `/<base path>/api/webhooks/…`) behind a custom domain.
 */
export const WEBHOOK_PATH_REGEX = '^(/[^/]+)?/api/webhooks/';

/**
 * The regex (WAF's PCRE subset: no lookaround, no non-capturing groups) matching the URI paths of
 * the given routes, with or without a leading stage or base-path segment: each `{param}` matches
 * one path segment. Input: manifest routes; output: `^(/[^/]+)?(/a/[^/]+|/b)$`.
 */
function routePathRegex(paths: readonly string[]): string {
  const alternatives = [...new Set(paths)].map((p) =>
    p
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join(''),
  );
  return `^(/[^/]+)?(${alternatives.join('|')})$`;
}

/** URI paths of the public (unauthenticated, not webhook) routes of the manifest, as a WAF regex. */
export function publicPathRegex(routes: readonly Pick<RouteDef, 'path' | 'auth'>[] = manifestRoutes): string {
  return routePathRegex(routes.filter((r) => r.auth === 'public').map((r) => r.path));
}

/**
 * Text transformations of the per-token key, in order: every whitespace character (tab, CR, LF,
 * FF, VT, NBSP) becomes a space and runs of spaces become one. The authorizer accepts only
 * `Bearer <token>` with nothing around it (shared/auth/verify-token.ts), so every header that
 * authenticates a token normalises to one key.
 */
const TOKEN_KEY_TRANSFORMATIONS: CfnWebACL.TextTransformationProperty[] = [{ priority: 0, type: 'COMPRESS_WHITE_SPACE' }];

/** Key of the 429 body in the web ACL's CustomResponseBodies. */
const RATE_LIMITED_BODY = 'RateLimited';

/** Props of {@link RateLimitWaf}. */
export interface RateLimitWafProps {
  /** The API stage the web ACL protects. */
  stage: Stage;
  /** Base of `error.docs` links (ServiceApi.docsBaseUrl; may be a CloudFormation token). */
  docsBaseUrl: string;
  /** Prefix of the web ACL's CloudWatch metric names. */
  metricPrefix?: string;
}

/** The 429 body: the error envelope of RATE_LIMITED (docs/api/conventions.md#http-and-errors). */
export function rateLimitedBody(docsBaseUrl: string): string {
  return `{"error":{"code":"RATE_LIMITED","message":${JSON.stringify(ERROR_CODES.RATE_LIMITED.title)},"docs":"${docsBaseUrl}/errors#RATE_LIMITED"}}`;
}

/** The web ACL with the two rate-based rules, associated with the stage. */
export class RateLimitWaf extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: RateLimitWafProps) {
    super(scope, id);
    const prefix = props.metricPrefix ?? 'coffee-trace';
    const visibility = (name: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `${prefix}-${name}`,
    });
    const block429: CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: RATE_LIMITED_BODY,
          responseHeaders: [{ name: 'Retry-After', value: String(RETRY_AFTER_SECONDS) }],
        },
      },
    };
    const pathMatches = (regexString: string): CfnWebACL.StatementProperty => ({
      regexMatchStatement: { fieldToMatch: { uriPath: {} }, regexString, textTransformations: [{ priority: 0, type: 'NONE' }] },
    });
    const webhookPath = pathMatches(WEBHOOK_PATH_REGEX);
    const publicPath = pathMatches(publicPathRegex());

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: `Per-token, public per-IP and webhook per-IP rate limits of the ${STAGE_NAME} API stage`,
      defaultAction: { allow: {} },
      visibilityConfig: visibility('web-acl'),
      customResponseBodies: {
        [RATE_LIMITED_BODY]: { contentType: 'APPLICATION_JSON', content: rateLimitedBody(props.docsBaseUrl) },
      },
      rules: [
        {
          name: 'PerToken',
          priority: 0,
          action: block429,
          visibilityConfig: visibility('per-token'),
          statement: {
            rateBasedStatement: {
              limit: PER_TOKEN_LIMIT,
              evaluationWindowSec: WINDOW_SECONDS,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: 'Authorization', textTransformations: TOKEN_KEY_TRANSFORMATIONS } }],
              scopeDownStatement: { notStatement: { statement: webhookPath } },
            },
          },
        },
        {
          name: 'PublicPerIp',
          priority: 1,
          action: block429,
          visibilityConfig: visibility('public-per-ip'),
          statement: {
            rateBasedStatement: {
              limit: PUBLIC_PER_IP_LIMIT,
              evaluationWindowSec: WINDOW_SECONDS,
              aggregateKeyType: 'IP',
              scopeDownStatement: publicPath,
            },
          },
        },
        {
          name: 'WebhookPerIp',
          priority: 2,
          action: block429,
          visibilityConfig: visibility('webhook-per-ip'),
          statement: {
            rateBasedStatement: {
              limit: WEBHOOK_PER_IP_LIMIT,
              evaluationWindowSec: WINDOW_SECONDS,
              aggregateKeyType: 'IP',
              scopeDownStatement: webhookPath,
            },
          },
        },
      ],
    });

    new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
