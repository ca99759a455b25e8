import { kmsLedgerAccount } from '../../shared/adapters/ledger/kms-signer';

/**
 * `npm run ledger-signer-address -- <KMS key id or ARN>`: the Ethereum address of the stack's
 * ledger signer KMS key (output LedgerSignerKmsKeyId), read with kms:GetPublicKey with the
 * caller's AWS credentials. Fund it with gas, pass it as TreasuryAddress, and grant it the
 * contracts' roles (`SERVICE_SIGNER_KMS_KEY_ID=<key> npm run deploy-contracts`).
 */
async function main() {
  const keyId = process.argv[2]?.trim() || process.env.LEDGER_SIGNER_KMS_KEY_ID?.trim();
  if (!keyId) throw new Error('usage: npm run ledger-signer-address -- <KMS key id or ARN>');
  const account = await kmsLedgerAccount(keyId);
  process.stdout.write(`${account.address}\n`);
}

main().catch((err) => {
  process.stderr.write(`ledger-signer-address failed: ${(err as Error).message}\n`);
  process.exit(1);
});
