import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` inside the Lambda bundles only (an esbuild
 * alias in infra/bundling.ts). Lambda always hands the function its execution role's credentials
 * as environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), which is
 * the first link of the SDK's default chain; the rest of that chain (shared ini files, SSO, STS web
 * identity, ECS/IMDS) can never apply there and costs about 90 KB per bundle. Local runs and
 * tests use the SDK unchanged.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
