import { AuditAnchorRepository } from '../../shared/adapters/dynamodb/anchor-repo';

/**
 * `npm run anchor-backfill`: once, after upgrading a stack deployed before periodic anchors
 * (docs/api/anchoring.md#anchoring-of-the-audit-log), marks the audit head of every batch as pending so the next run of the
 * audit-anchorer commits it — entries written before anchoring existed then get their anchor.
 * Idempotent (a batch already marked at its head is skipped). Reads TABLE_NAME and the AWS
 * credentials and region of the environment (AWS_ENDPOINT_URL_DYNAMODB for the local stack).
 * Exit code 0 when done, 1 on an error (safe to run again).
 */
async function main(): Promise<void> {
  if (!process.env.TABLE_NAME) throw new Error('set TABLE_NAME (the stack output TableName)');
  const result = await new AuditAnchorRepository().backfillMarkers(new Date().toISOString(), (p) => {
    process.stdout.write(`scanned ${p.scanned} batches, marked ${p.marked}\n`);
  });
  process.stdout.write(`done: ${result.marked} of ${result.scanned} batches marked for the next anchor\n`);
}

main().catch((err) => {
  process.stderr.write(`anchor-backfill failed: ${(err as Error).message}\n`);
  process.exit(1);
});
