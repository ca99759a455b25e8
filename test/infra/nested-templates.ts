/**
 * Reading a nested stack's template in tests: its resources, and what a parameter of it stands for
 * in the parent. CDK passes every reference from the parent (a function's ARN, a queue's name) as
 * a parameter whose value the parent's `AWS::CloudFormation::Stack` resource sets; {@link
 * NestedTemplate.resolve} turns `{ Ref: <parameter> }` back into that value (e.g.
 * `{ 'Fn::GetAtt': [<function logical id>, 'Arn'] }`), so assertions name the parent's resources
 * as they did before the resources moved.
 */
import { Stack, type NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

type Json = Record<string, any>;

export interface NestedTemplate {
  template: Template;
  resources: Record<string, Json>;
  /** The parent's value of a `{ Ref: <parameter of the nested stack> }`; any other value unchanged. */
  resolve(value: unknown): unknown;
}

/** The nested stack's template and its parameters as the parent sets them. */
export function nestedTemplate(nested: NestedStack): NestedTemplate {
  const parent = Stack.of(nested.node.scope!);
  const resource = nested.nestedStackResource;
  if (!resource) throw new Error(`${nested.node.path} has no nested stack resource`);
  const parentResources = Template.fromStack(parent).toJSON().Resources as Record<string, Json>;
  const own = parentResources[parent.getLogicalId(resource)];
  if (own?.Type !== 'AWS::CloudFormation::Stack')
    throw new Error(`no AWS::CloudFormation::Stack for ${nested.node.path} in ${parent.stackName}`);
  const parameters = (own.Properties.Parameters ?? {}) as Json;
  const template = Template.fromStack(nested);
  const declared = (template.toJSON().Parameters ?? {}) as Json;
  return {
    template,
    resources: template.toJSON().Resources as Record<string, Json>,
    resolve(value: unknown): unknown {
      const ref = value && typeof value === 'object' && Object.keys(value).length === 1 ? (value as Json).Ref : undefined;
      if (typeof ref !== 'string' || !(ref in declared)) return value;
      if (!(ref in parameters)) throw new Error(`parameter ${ref} of ${nested.node.path} is not set by ${parent.stackName}`);
      return parameters[ref];
    },
  };
}
