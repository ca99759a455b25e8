/**
 * cdk-nag (v3 API): the AWS Solutions rule pack runs as a policy-validation plugin during synth;
 * any finding not acknowledged (with `Validations.of(construct).acknowledge`) next to the
 * resource it concerns fails the synth.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';

/** Registers the AWS Solutions checks on the app (verbose: findings carry their explanation). */
export function enableNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
}
