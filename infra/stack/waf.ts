/**
 * Per-caller rate limits in AWS (decisions §5): a REGIONAL WAFv2 web ACL on the API stage. The
 * stage throttle (infra/stack/http-api.ts THROTTLE) is only the outer wall shared by everyone;
 * these rules make one noisy caller wait without slowing the others:
 * - `PerToken`: on every non-webhook route, a rate-based rule whose custom aggregation key is the
 *   `Authorization` header: {@link PER_TOKEN_LIMIT} requests per {@link WINDOW_SECONDS} s window per
 *   token (50 requests/s sustained, as locally). Requests without the header (the public docs,
 *   calls the authorizer answers 401) are not counted by it: WAF skips a rate-based rule whose
 *   key is missing; the stage throttle covers them.
 * - `WebhookPerIp`: on `/api/webhooks/*` (providers hold no token), per source IP:
 *   {@link WEBHOOK_PER_IP_LIMIT} requests per window. That is half the stage's sustained rate
 *   (25 requests/s), so one sender cannot take the whole stage; the senders retry a 429 on the
 *   Standard Webhooks schedule, so a burst above it is delayed, not lost.
 * A blocked request is answered 429 in the service's error envelope (RATE_LIMITED, with `docs`)
 * and `Retry-After: 60` (the evaluation window). WAF answers before API Gateway, so the body has
 * no `request_id` (WAF responses are static).
 */
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { ERROR_CODES } from '../../shared/domain/error-catalogue';
import { STAGE_NAME } from './http-api';

/** Evaluation window of both rate-based rules, seconds. */
export const WINDOW_SECONDS = 60;
/** Requests per token per window (decisions §5: 3,000 per 60 s). */
export const PER_TOKEN_LIMIT = 3000;
/** Requests per source IP per window on the webhook routes. */
export const WEBHOOK_PER_IP_LIMIT = 1500;
/** `Retry-After` of the 429: the length of the window, after which the rate is re-evaluated. */
export const RETRY_AFTER_SECONDS = WINDOW_SECONDS;

/**
 * URI paths of the inbound webhook routes as WAF sees them: `/prod/api/webhooks/…` on the
 * execute-api URL, `/api/webhooks/…` (or `/<base path>/api/webhooks/…`) behind a custom domain.
 */
export const WEBHOOK_PATH_REGEX = '^(/[^/]+)?/api/webhooks/';

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

/** The 429 body: the error envelope of RATE_LIMITED (interface-spec "Errors"). */
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
    const webhookPath: CfnWebACL.StatementProperty = {
      regexMatchStatement: {
        fieldToMatch: { uriPath: {} },
        regexString: WEBHOOK_PATH_REGEX,
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    };

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: `Per-token and per-IP webhook rate limits of the ${STAGE_NAME} API stage, decisions 5`,
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
              customKeys: [{ header: { name: 'Authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
              scopeDownStatement: { notStatement: { statement: webhookPath } },
            },
          },
        },
        {
          name: 'WebhookPerIp',
          priority: 1,
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
