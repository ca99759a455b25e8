import { createServiceTable, LOCAL_TABLE_NAME, localTableEnv, startDynamoDbLocal } from '../../../infra/local/dynamodb-local';

/**
 * A DynamoDB Local of the suite's own, with the service's table, started before the suite's tests
 * and stopped after them (jest's beforeAll / afterAll, registered where this is called); the
 * process's table settings (`localTableEnv`) point at it. Returns its endpoint (a URL), readable once
 * the suite's tests run.
 */
export function useOwnDynamoDbTable(): () => string {
  let stop: (() => Promise<void>) | undefined;
  let endpoint: string | undefined;
  beforeAll(async () => {
    const ddb = await startDynamoDbLocal();
    stop = ddb.stop;
    endpoint = ddb.endpoint;
    Object.assign(process.env, localTableEnv(endpoint), { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' });
    await createServiceTable(endpoint, LOCAL_TABLE_NAME);
  }, 180_000);
  afterAll(async () => {
    await stop?.();
  });
  return () => {
    if (!endpoint) throw new Error('the suite’s DynamoDB Local is not started yet');
    return endpoint;
  };
}
