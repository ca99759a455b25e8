import { loadRolePolicies, rolePoliciesCacheFile, templateInputsHash } from './policy-cache';

/**
 * `node --import tsx infra/local/iam/prepare.ts`: fills the role-policy cache of the local IAM
 * enforcement (./policy-cache.ts) before a local stack starts, so the stack's start never waits
 * for a synth (the integration tests run it before starting their stack). Prints the cache file.
 */
async function main() {
  const started = Date.now();
  let synthMs: number | undefined;
  await loadRolePolicies((ms) => (synthMs = ms));
  const file = rolePoliciesCacheFile(templateInputsHash());
  process.stdout.write(
    `${synthMs === undefined ? 'cached' : `synthesized in ${(synthMs / 1000).toFixed(1)} s`}: ${file} (${Date.now() - started} ms)\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`local IAM prepare failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
