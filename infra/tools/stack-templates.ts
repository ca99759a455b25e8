/**
 * The synthesized templates of a stack and of every nested stack under it, read as one template:
 * the tools and tests that read what the stack deploys (role policies for the IAM tests, the local
 * stack's IAM enforcement and `npm run iam-report`; the template tests) see every resource wherever
 * it lives (docs/deploy.md#what-the-stack-contains).
 *
 * Flattening: each nested stack's resources join the parent's under their own logical ids; a `Ref`
 * to a nested stack's parameter becomes the value the parent gives it (its
 * `AWS::CloudFormation::Stack` resource's `Parameters`), and a parent's `Fn::GetAtt` of
 * `<nested stack>.Outputs.<name>` becomes that output's value, both read in their own template and
 * recursively, so a reference reads as it would if everything were in one template
 * (e.g. `{ "Fn::GetAtt": ["<function logical id>", "Arn"] }`). The nested stacks' own
 * `AWS::CloudFormation::Stack` resources stay (they are resources of the parent).
 */
import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

// biome-ignore lint/suspicious/noExplicitAny: a synthesized CloudFormation template is read loosely; every field used is checked where it is read
type Json = Record<string, any>;

/** One synthesized template of the tree: the top-level stack's or a nested stack's. */
export interface StackTemplate {
  /** The stack's construct path (`CoffeeTrace`, `CoffeeTrace/FunctionsPayments`). */
  path: string;
  stack: Stack;
  template: Json;
}

/** The nested stacks directly under `stack`. */
function nestedStacksOf(stack: Stack): NestedStack[] {
  return stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === stack);
}

/**
 * The template of `stack` and of each nested stack under it, parents first (synthesizes the app
 * once: later calls read the same assembly).
 */
export function stackTemplates(stack: Stack): StackTemplate[] {
  const out: StackTemplate[] = [{ path: stack.node.path, stack, template: Template.fromStack(stack).toJSON() as Json }];
  for (const nested of nestedStacksOf(stack)) out.push(...stackTemplates(nested));
  return out;
}

/**
 * `stack`'s template with every nested stack under it flattened in (see the file comment):
 * `Parameters` and `Outputs` are the top-level template's (plus a nested stack's parameters its
 * parent does not set, e.g. SSM parameter types with their default), `Resources`, `Conditions` and
 * `Mappings` all of them (a mapping several templates hold must be the same in each).
 * @throws Error when two templates use the same logical id, or a nested template uses one of its
 *   parameters inside a `Fn::Sub` string (not flattened).
 */
export function flatTemplate(stack: Stack): Json {
  const all = stackTemplates(stack);
  const byStack = new Map(all.map((t) => [t.stack, t]));
  const flat: Json = {
    ...all[0]!.template,
    Parameters: { ...(all[0]!.template.Parameters ?? {}) },
    Conditions: { ...(all[0]!.template.Conditions ?? {}) },
    Resources: {},
  };

  /** How a template's own references read in the flat one. */
  interface Scope {
    t: StackTemplate;
    /** The value the parent gives a parameter (already flattened), or undefined when it sets none. */
    parameter(name: string): unknown;
    /** Nested stack resource logical id → the child's scope. */
    children: Map<string, Scope>;
  }
  const scopes = new Map<Stack, Scope>();
  const scopeOf = (t: StackTemplate): Scope => {
    const known = scopes.get(t.stack);
    if (known) return known;
    const parentStack = t.stack.nestedStackParent;
    const given: Json = {};
    if (parentStack) {
      const resource = (t.stack as NestedStack).nestedStackResource!;
      Object.assign(given, byStack.get(parentStack)!.template.Resources[parentStack.getLogicalId(resource)].Properties.Parameters ?? {});
    }
    const memo = new Map<string, unknown>();
    const scope: Scope = {
      t,
      children: new Map(),
      parameter(name) {
        if (!parentStack || !(name in given)) return undefined;
        if (!memo.has(name)) memo.set(name, walk(given[name], scopeOf(byStack.get(parentStack)!)));
        return memo.get(name);
      },
    };
    scopes.set(t.stack, scope);
    for (const child of nestedStacksOf(t.stack))
      scope.children.set(t.stack.getLogicalId(child.nestedStackResource!), scopeOf(byStack.get(child)!));
    return scope;
  };

  const walk = (v: unknown, scope: Scope): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, scope));
    if (!v || typeof v !== 'object') return v;
    const o = v as Json;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === 'Ref' && typeof o.Ref === 'string') {
      const given = scope.parameter(o.Ref);
      if (given !== undefined) return given;
    }
    if (keys.length === 1 && keys[0] === 'Fn::GetAtt') {
      const [id, attr] = Array.isArray(o['Fn::GetAtt']) ? (o['Fn::GetAtt'] as string[]) : String(o['Fn::GetAtt']).split(/\.(.+)/);
      const child = scope.children.get(id!);
      if (child && attr?.startsWith('Outputs.')) {
        const output = child.t.template.Outputs?.[attr.slice('Outputs.'.length)];
        if (!output) throw new Error(`flatTemplate: ${child.t.path} has no output ${attr}`);
        return walk(output.Value, child);
      }
    }
    if (keys.length === 1 && keys[0] === 'Fn::Sub' && scope.t.stack.nestedStackParent) {
      const text = Array.isArray(o['Fn::Sub']) ? String(o['Fn::Sub'][0]) : String(o['Fn::Sub']);
      for (const [, name] of text.matchAll(/\$\{([^}!.]+)\}/g))
        if (scope.parameter(name!) !== undefined) throw new Error(`flatTemplate: ${scope.t.path} uses parameter ${name} in a Fn::Sub`);
    }
    return Object.fromEntries(keys.map((k) => [k, walk(o[k], scope)]));
  };

  for (const t of all) {
    const scope = scopeOf(t);
    for (const [id, r] of Object.entries((t.template.Resources ?? {}) as Json)) {
      if (id in flat.Resources) throw new Error(`flatTemplate: logical id ${id} is used in ${t.path} and in another template`);
      flat.Resources[id] = walk(r, scope);
    }
    if (t === all[0]) continue;
    for (const [name, m] of Object.entries((t.template.Mappings ?? {}) as Json)) {
      flat.Mappings ??= {};
      if (name in flat.Mappings && JSON.stringify(flat.Mappings[name]) !== JSON.stringify(m))
        throw new Error(`flatTemplate: mapping ${name} of ${t.path} differs from another template's`);
      flat.Mappings[name] = m;
    }
    for (const [name, c] of Object.entries((t.template.Conditions ?? {}) as Json)) {
      if (name in flat.Conditions) throw new Error(`flatTemplate: condition ${name} is used in ${t.path} and in another template`);
      flat.Conditions[name] = walk(c, scope);
    }
    for (const [name, p] of Object.entries((t.template.Parameters ?? {}) as Json)) {
      if (scope.parameter(name) !== undefined) continue;
      if (name in flat.Parameters && JSON.stringify(flat.Parameters[name]) !== JSON.stringify(p))
        throw new Error(`flatTemplate: parameter ${name} of ${t.path} differs from another template's`);
      flat.Parameters[name] = p;
    }
  }
  if (Object.keys(flat.Conditions).length === 0) delete flat.Conditions;
  return flat;
}
