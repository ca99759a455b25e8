// Hardhat 2 configuration for the local ledger: `hardhat node` only (contracts are compiled with
// solc-js by infra/ledger/compile.ts, never by hardhat, so no compiler is downloaded).
// Started by infra/local/hardhat-node.ts with `--config infra/ledger/hardhat.config.cjs`.
const path = require('node:path');

const scratch = path.resolve(__dirname, '..', '..', '.local', 'hardhat');

/** @type {import('hardhat/config').HardhatUserConfig} */
module.exports = {
  defaultNetwork: 'hardhat',
  networks: {
    hardhat: {
      chainId: 31337,
      hardfork: 'prague',
      mining: { auto: true, interval: 0 },
      // Blocks mined within one second share its timestamp, as on a real chain, instead of each
      // taking the next second: the chain's clock stays with the wall clock (a deploy of many
      // transactions would otherwise put it tens of seconds ahead, for good).
      allowBlocksWithSameTimestamp: true,
      // The local stack funds its own random signer with hardhat_setBalance; keep the built-in
      // test accounts few.
      accounts: { count: 2 },
    },
  },
  // Nothing is compiled here; point hardhat's folders at git-ignored scratch space.
  paths: {
    sources: path.join(scratch, 'sources'),
    cache: path.join(scratch, 'cache'),
    artifacts: path.join(scratch, 'artifacts'),
  },
};
