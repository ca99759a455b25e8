import * as v from 'valibot';
import { DomainError, type ErrorCode, type ErrorDetail } from '../domain/errors';

/** Turns valibot issues into `error.details` entries `{path, message}` (docs/api/conventions.md#http-and-errors). */
export function issuesToDetails(issues: readonly v.BaseIssue<unknown>[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: v.getDotPath(issue) ?? '(body)',
    message: issue.expected === 'never' ? 'unknown field: not part of this request (check its spelling)' : issue.message,
  }));
}

/**
 * A rule that reports a specific code instead of VALIDATION_ERROR when an issue of the given
 * valibot `types` is at `path` (e.g. weight_kg out of range → WEIGHT_OUT_OF_RANGE).
 */
export interface IssueCodeRule {
  path: string;
  types: string[];
  code: ErrorCode;
}

/**
 * Validates `input` against `schema`. Errors: DomainError VALIDATION_ERROR (400) with every issue
 * in `details`, or the code of the first matching `rules` entry.
 */
export function validate<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  rules: IssueCodeRule[] = [],
  what = 'request body',
): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  const details = issuesToDetails(result.issues);
  for (const rule of rules) {
    const hit = result.issues.find((i) => v.getDotPath(i) === rule.path && rule.types.includes(i.type));
    if (hit) throw new DomainError(rule.code, `${rule.path}: ${hit.message}`, { details });
  }
  const summary = details
    .slice(0, 3)
    .map((d) => `${d.path}: ${d.message}`)
    .join('; ');
  throw new DomainError('VALIDATION_ERROR', `Invalid ${what}: ${summary}${details.length > 3 ? '; …' : ''}`, { details });
}
