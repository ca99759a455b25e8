import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, type IFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { TableStreamConsumerDef } from '../../shared/manifest';

/**
 * Outbound webhooks (docs/api/outbound-webhooks.md#outbound-webhooks): the table's DynamoDB stream (NEW_AND_OLD_IMAGES, enabled in
 * ./stateful-resources.ts) feeds each table-stream consumer of the manifest (the
 * outbound-event-publisher; and the payout-receipt-sender, docs/operations.md#sms-receipt-to-the-farmer), filtered to the entities that make events, so delivery rows and
 * other items never invoke it. A batch that keeps failing is split in halves to isolate the bad
 * record, retried up to 10 times, and then sent (as stream coordinates) to `failureQueue`, the
 * outbound webhook queue's dead-letter queue, which the operators' "dead-letter queue not empty"
 * alarm watches. The delivery queue and its consumer are wired like every work queue (QUEUES).
 */
export class OutboundWebhookStream extends Construct {
  constructor(
    scope: Construct,
    id: string,
    props: { table: ITable; consumers: Array<{ def: TableStreamConsumerDef; fn: IFunction }>; failureQueue?: IQueue },
  ) {
    super(scope, id);
    for (const { def, fn } of props.consumers) {
      fn.addEventSource(
        new DynamoEventSource(props.table, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: def.batchSize,
          bisectBatchOnError: true,
          retryAttempts: 10,
          maxRecordAge: Duration.days(1),
          reportBatchItemFailures: true,
          filters: [FilterCriteria.filter({ dynamodb: { NewImage: { entity: { S: FilterRule.or(...def.entities) } } } })],
          ...(props.failureQueue ? { onFailure: new SqsDlq(props.failureQueue) } : {}),
        }),
      );
    }
  }
}
