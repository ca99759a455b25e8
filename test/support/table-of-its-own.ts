import { createServiceTable, localTableEnv } from '../../infra/local/dynamodb-local';
import { localStack } from './api';

/**
 * A table of the suite's own (the service's schema, named `<prefix>-<time>`) in the local stack's
 * DynamoDB Local, made before the suite's tests and the process's table settings pointed at it;
 * after them, the settings are put back. The stack never sees what the suite writes there (its
 * writer, its scheduled reconcilers). Jest's beforeAll / afterAll, registered where this is called.
 * Returns the table's name.
 */
export function useTableOfItsOwn(prefix: string): string {
  const table = `${prefix}-${Date.now()}`;
  let saved: NodeJS.ProcessEnv | undefined;
  beforeAll(async () => {
    saved = { ...process.env };
    const endpoint = localStack().endpoints.dynamodb!;
    Object.assign(process.env, localTableEnv(endpoint), { TABLE_NAME: table });
    await createServiceTable(endpoint, table);
  });
  afterAll(() => {
    if (saved) process.env = saved;
  });
  return table;
}
