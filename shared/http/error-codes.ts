import { ERROR_MEANINGS } from '../domain/error-catalogue';
import type { ErrorCode } from '../domain/errors';
import { ERROR_STATUS } from './error-status';

/**
 * Every error code with its HTTP status and meaning, for the API reference (GET /docs/errors, the
 * OpenAPI document) and API Gateway's own error responses. Apart from ./error-status.ts so that the
 * handlers' bundles, which need only the statuses, do not carry the meanings.
 */
export const ERROR_CODES = Object.fromEntries(
  (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [code, { status: ERROR_STATUS[code], title: ERROR_MEANINGS[code] }]),
) as Record<ErrorCode, { status: number; title: string }>;
