/**
 * Least privilege, measured: which granted actions of each function no exercised call used.
 *
 * Input: each function's identity policies (./role-policies.ts) and exercised calls, one JSON
 * object per line (NDJSON), as the local stack's IAM enforcement writes them when
 * LOCAL_IAM_DECISIONS_FILE is set:
 * `{"fn": "<function folder>", "action": "dynamodb:PutItem", "resource": "<arn>", "allowed": true}`.
 *
 * A granted action is one action (or action pattern, e.g. `kms:GenerateDataKey*`) of one Allow
 * statement. It counts as used when an allowed call of that function has a matching action (IAM
 * wildcards, case-insensitive) and, with `strictResources`, a resource matching one of the
 * statement's `Resource` patterns (or none of its `NotResource`). Resource matching is off by
 * default because the calls come from the local stack, whose resource names and account differ
 * from the synthesized template's. Conditions are not evaluated: a grant a call could use counts.
 */
import type { NamedPolicy } from './role-policies';

/** One exercised call. */
export interface ExercisedCall {
  fn: string;
  action: string;
  resource: string;
  allowed: boolean;
}

/** One granted action no exercised call used. */
interface UnusedGrant {
  /** The policy's name (`<logical id>` of its AWS::IAM::Policy) and the statement's position in it. */
  policy: string;
  statement: number;
  sid?: string;
  action: string;
  resources: string[];
}

/** Per function: the calls seen, and the grants none used. */
export interface UnusedGrantsReport {
  fn: string;
  calls: number;
  unused: UnusedGrant[];
}

/**
 * Parses NDJSON exercised calls; blank lines skipped. @throws Error naming the line of a line that
 * is not such an object.
 */
export function parseExercisedCalls(ndjson: string): ExercisedCall[] {
  const out: ExercisedCall[] = [];
  ndjson.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new Error(`exercised calls, line ${i + 1}: not JSON`);
    }
    const o = v as Partial<ExercisedCall>;
    if (typeof o?.fn !== 'string' || typeof o.action !== 'string' || typeof o.resource !== 'string' || typeof o.allowed !== 'boolean') {
      throw new Error(`exercised calls, line ${i + 1}: want {"fn", "action", "resource", "allowed"}`);
    }
    out.push({ fn: o.fn, action: o.action, resource: o.resource, allowed: o.allowed });
  });
  return out;
}

/** An IAM wildcard pattern (`*`, `?`) as a RegExp over the whole value. */
function globRegExp(pattern: string, caseInsensitive: boolean): RegExp {
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, caseInsensitive ? 'i' : '');
}

const list = (v: unknown): string[] => (v === undefined ? [] : ([v].flat() as string[]));

/**
 * For each function of `policies`, the granted actions (per Allow statement) that no allowed call
 * in `calls` used; functions sorted by name. Calls of functions without policies are ignored.
 */
export function unusedGrants(
  policies: Record<string, NamedPolicy[]>,
  calls: readonly ExercisedCall[],
  opts: { strictResources?: boolean } = {},
): UnusedGrantsReport[] {
  const byFn = new Map<string, ExercisedCall[]>();
  for (const c of calls) if (c.allowed) byFn.set(c.fn, [...(byFn.get(c.fn) ?? []), c]);
  return Object.keys(policies)
    .sort()
    .map((fn) => {
      const seen = byFn.get(fn) ?? [];
      const unused: UnusedGrant[] = [];
      for (const { name, policy } of policies[fn]!) {
        policy.Statement.forEach((st, index) => {
          if (st.Effect !== 'Allow') return;
          const resources = list(st.Resource);
          const notResources = list(st.NotResource);
          const resourceOk = (arn: string) =>
            !opts.strictResources ||
            (resources.length
              ? resources.some((r) => globRegExp(r, false).test(arn))
              : !notResources.some((r) => globRegExp(r, false).test(arn)));
          for (const action of list(st.Action)) {
            const re = globRegExp(action, true);
            if (seen.some((c) => re.test(c.action) && resourceOk(c.resource))) continue;
            unused.push({
              policy: name,
              statement: index,
              ...(typeof st.Sid === 'string' ? { sid: st.Sid } : {}),
              action,
              resources: resources.length ? resources : notResources.map((r) => `NOT ${r}`),
            });
          }
        });
      }
      return { fn, calls: seen.length, unused };
    });
}

/** The report as text: one block per function, one line per unused granted action. */
export function formatUnusedGrants(report: readonly UnusedGrantsReport[]): string {
  const lines: string[] = [];
  for (const r of report) {
    lines.push(
      `${r.fn} (${r.calls} allowed call${r.calls === 1 ? '' : 's'} seen): ${r.unused.length ? `${r.unused.length} granted action${r.unused.length === 1 ? '' : 's'} never used` : 'every granted action used'}`,
    );
    for (const u of r.unused)
      lines.push(`  ${u.action}  [${u.policy} statement ${u.statement}${u.sid ? ` ${u.sid}` : ''}] on ${u.resources.join(', ')}`);
  }
  return lines.join('\n');
}
