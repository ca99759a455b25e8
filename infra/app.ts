/**
 * CDK app entry (`cdk synth`, `cdk deploy`; cdk.json runs it with tsx). Environment-agnostic
 * unless CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION are set (the CLI sets them from the profile).
 */
import { App } from 'aws-cdk-lib';
import { CoffeeTraceStack } from './stack/coffee-trace-stack';
import { enableNagChecks } from './stack/nag';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
new CoffeeTraceStack(app, 'CoffeeTrace', {
  description: 'Coffee batch traceability and farmer payouts',
  ...(account && region ? { env: { account, region } } : {}),
});
enableNagChecks(app);
