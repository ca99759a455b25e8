// Jest configuration (stack.md "Jest with ESM-only packages"). ts-jest compiles TypeScript and the
// ESM-only packages listed below to CommonJS; it does not type-check (`npm run typecheck` does).
const path = require('node:path');

const esm = [
  'jose',
  'multiformats',
  'ipfs-unixfs-importer',
  'ipfs-unixfs',
  'blockstore-core',
  'interface-blockstore',
  'interface-store',
  '@ipld',
  '@multiformats',
  '@libp2p',
  '@chainsafe',
  'it-[^/]+',
  'uint8arrays',
  'uint8arraylist',
  'uint8-varint',
  'hamt-sharding',
  'progress-events',
  'protons-runtime',
  'p-queue',
  'p-timeout',
  'p-defer',
  'race-signal',
  'main-event',
  'abort-error',
  'weald',
  '@middy',
  'fauxqs',
  'ulid',
  'ipfs-unixfs-exporter',
  'blockstore-fs',
  'file-type',
  'strtok3',
  'token-types',
  'uint8array-extras',
  '@tokenizer',
  '@borewit',
  'steno',
  'cborg',
];
const rootDir = path.resolve(__dirname, '..');
const base = {
  rootDir,
  testEnvironment: 'node',
  transform: {
    '^.+\\.[tj]s$': [
      'ts-jest',
      {
        tsconfig: { allowJs: true, module: 'commonjs', esModuleInterop: true, target: 'es2022', isolatedModules: true },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(?:${esm.join('|')})/)`],
  resolver: '<rootDir>/test/setup/resolver.cjs',
  setupFiles: ['<rootDir>/test/setup/polyfills.ts'],
};

module.exports = {
  rootDir,
  testTimeout: 60_000,
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.test\\.ts$'],
    },
    {
      ...base,
      displayName: 'int',
      testMatch: ['<rootDir>/test/**/*.int.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/contract-fetch.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
};
