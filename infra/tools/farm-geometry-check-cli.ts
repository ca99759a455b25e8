import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RegistryRepository } from '../../shared/adapters/dynamodb/registry-repo';
import { farmsFailingGeometryRules } from '../../shared/use-cases/farm-geometry-check';
import { localDataDir } from '../local/dev-keys';
import { localTableEnv } from '../local/dynamodb-local';

/**
 * `npm run farm-geometry-check` (docs/api/eudr.md#geometry-rules): lists the registered farms that
 * registration would refuse under today's geometry rules (the EU Information System's included), one
 * line per farm with the broken rule. Read-only. Against the local stack ($LOCAL_DATA_DIR/stack.json)
 * when TABLE_NAME is unset; against a deployed table with TABLE_NAME and AWS credentials and region.
 * Exit code 0 when every farm passes, 3 when some fail, 1 on an error.
 */
async function main(): Promise<number> {
  if (!process.env.TABLE_NAME) {
    const file = join(localDataDir(), 'stack.json');
    if (!existsSync(file)) throw new Error(`set TABLE_NAME (a deployed stack), or start the local stack (${file} not found)`);
    const stack = JSON.parse(readFileSync(file, 'utf8')) as { endpoints: Record<string, string> };
    Object.assign(process.env, localTableEnv(stack.endpoints.dynamodb!));
  }
  const { checked, failing } = await farmsFailingGeometryRules(new RegistryRepository().allFarmers());
  process.stdout.write(`farms checked: ${checked}; failing the geometry rules: ${failing.length}\n`);
  for (const f of failing) process.stdout.write(`  ${f.farmer_id} (${f.cooperative_id}) ${f.code}: ${f.message}\n`);
  return failing.length > 0 ? 3 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`farm-geometry-check failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
