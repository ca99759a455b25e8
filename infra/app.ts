/**
 * CDK app entry (`cdk synth`, `cdk deploy`; cdk.json runs it with tsx). Environment-agnostic
 * unless CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION are set (the CLI sets them from the profile).
 * The stage comes from context: `-c stage=dev|prod` (infra/stack/stage.ts).
 */
import { App } from 'aws-cdk-lib';
import { CoffeeTraceStack } from './stack/coffee-trace-stack';
import { enableNagChecks } from './stack/nag';
import { readStage } from './stack/stage';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
// `-c stage=dev|prod` (default dev) names the stack CoffeeTrace / CoffeeTrace-prod (infra/stack/stage.ts).
new CoffeeTraceStack(app, readStage(app).stackName, {
  description: 'Coffee batch traceability and farmer payouts',
  ...(account && region ? { env: { account, region } } : {}),
});
enableNagChecks(app);
