import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the response validator reads. */
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { responses?: Record<string, OpenApiResponse> }>>;
  components?: Record<string, unknown>;
}
interface OpenApiResponse {
  content?: Record<string, { schema?: unknown }>;
}

/** One response as the test saw it. `body` is the raw text (empty when there is none). */
export interface SeenResponse {
  method: string;
  /** Path without the query string, e.g. `/payments/PAY-1`. */
  path: string;
  status: number;
  contentType: string | null;
  body: string;
}

/** Outcome: `unmatched` when no operation of the document has this method + path. */
export type ContractResult =
  | { kind: 'unmatched' }
  | { kind: 'valid'; operation: string }
  | { kind: 'invalid'; operation: string; problems: string[] };

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/**
 * Validates responses against an OpenAPI 3.1 document: the response is matched to its operation
 * by method + path template (literal segments win over templated ones), its status must be
 * documented for the operation (or a `default` response exist), its content type must be one the
 * response declares, and a JSON body must validate against the declared schema (Ajv, JSON Schema
 * 2020-12 — the dialect of OpenAPI 3.1; `components` refs resolve inside the document).
 */
export class ContractValidator {
  private readonly ajv: Ajv2020;
  private readonly routes: Array<{ template: string; regex: RegExp; literal: number }>;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDoc) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'openapi:doc', components: doc.components ?? {} } as object);
    this.routes = Object.keys(doc.paths)
      .map((template) => {
        const segments = template.split('/');
        const regex = new RegExp(
          `^${segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`,
        );
        return { template, regex, literal: segments.filter((s) => !s.startsWith('{')).length };
      })
      .sort((a, b) => b.literal - a.literal);
  }

  /** The path template of the document that `path` falls under, or undefined. */
  match(method: string, path: string): string | undefined {
    const m = method.toLowerCase();
    return this.routes.find((r) => r.regex.test(path) && this.doc.paths[r.template]?.[m])?.template;
  }

  /** Validates one response; see the class docblock for the rules. */
  validate(res: SeenResponse): ContractResult {
    const method = res.method.toLowerCase();
    if (!METHODS.has(method)) return { kind: 'unmatched' };
    const template = this.match(method, res.path);
    if (!template) return { kind: 'unmatched' };
    const operation = `${method.toUpperCase()} ${template}`;
    const responses = this.doc.paths[template]![method]!.responses ?? {};
    const key =
      String(res.status) in responses
        ? String(res.status)
        : `${String(res.status)[0]}XX` in responses
          ? `${String(res.status)[0]}XX`
          : 'default' in responses
            ? 'default'
            : undefined;
    if (!key)
      return {
        kind: 'invalid',
        operation,
        problems: [`status ${res.status} is not documented (documented: ${Object.keys(responses).join(', ')})`],
      };
    const content = responses[key]!.content;
    const problems: string[] = [];
    if (!content || Object.keys(content).length === 0) {
      if (res.body.length > 0 && method !== 'head')
        problems.push(`status ${res.status} documents no body but one was sent (${res.contentType})`);
      return problems.length ? { kind: 'invalid', operation, problems } : { kind: 'valid', operation };
    }
    const mediaType = (res.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const media = Object.entries(content).find(([k]) => k.toLowerCase() === mediaType);
    if (!media)
      return {
        kind: 'invalid',
        operation,
        problems: [
          `content type "${res.contentType}" is not documented for ${res.status} (documented: ${Object.keys(content).join(', ')})`,
        ],
      };
    const schema = media[1].schema;
    if (schema !== undefined && (mediaType === 'application/json' || mediaType.endsWith('+json')) && method !== 'head') {
      let body: unknown;
      try {
        body = JSON.parse(res.body);
      } catch {
        return { kind: 'invalid', operation, problems: [`body is not JSON though ${mediaType} was declared`] };
      }
      const validateFn = this.compile(`${operation} ${key} ${mediaType}`, schema);
      if (!validateFn(body)) {
        for (const e of validateFn.errors ?? [])
          problems.push(`${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
      }
    }
    return problems.length ? { kind: 'invalid', operation, problems: problems.slice(0, 20) } : { kind: 'valid', operation };
  }

  private compile(cacheKey: string, schema: unknown): ValidateFunction {
    let fn = this.compiled.get(cacheKey);
    if (!fn) {
      // Refs of the form `#/components/...` resolve against the document's components.
      const rewritten = JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"openapi:doc#/components/'));
      fn = this.ajv.compile(rewritten as object);
      this.compiled.set(cacheKey, fn);
    }
    return fn;
  }
}
