import { parseArgs } from 'node:util';
import { signDevToken, type DevTokenClaims } from './dev-keys';

/**
 * `npm run token -- --role ROLE [--cooperative ID] [--duties A,B] [--mfi ID] [--sub S] [--ttl SECONDS]`
 * prints one signed JWT on stdout (nothing else) that the local service accepts (docs/architecture.md#the-local-stack).
 */
async function main() {
  const { values } = parseArgs({
    options: {
      role: { type: 'string' },
      cooperative: { type: 'string' },
      duties: { type: 'string' },
      mfi: { type: 'string' },
      sub: { type: 'string' },
      ttl: { type: 'string', default: '3600' },
    },
    strict: true,
  });
  const roles = ['COOPERATIVE', 'AGENT', 'MFI', 'ADMIN'];
  const role = values.role?.toUpperCase();
  if (!role || !roles.includes(role)) fail(`--role must be one of ${roles.join(', ')}`);
  if ((role === 'COOPERATIVE' || role === 'AGENT') && !values.cooperative) fail(`--cooperative ID is required for ${role} tokens`);
  if (role === 'MFI' && !values.mfi) fail('--mfi ID is required for MFI tokens');
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 3600) fail('--ttl must be 1 to 3600 seconds');
  const claims: DevTokenClaims = {
    role: role as DevTokenClaims['role'],
    ...(values.sub ? { sub: values.sub } : {}),
    ...(values.cooperative ? { cooperative_id: values.cooperative } : {}),
    ...(values.mfi ? { mfi_id: values.mfi } : {}),
    ...(values.duties
      ? {
          duties: values.duties
            .split(',')
            .map((d) => d.trim().toUpperCase())
            .filter(Boolean),
        }
      : {}),
  };
  process.stdout.write(`${await signDevToken(claims, ttl)}\n`);
}

function fail(message: string): never {
  process.stderr.write(`token: ${message}\n`);
  process.exit(2);
}

main().catch((err) => fail((err as Error).message));
