import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import solc from 'solc';
import type { Hex } from 'viem';
import { repoRoot } from '../../shared/runtime/paths';

/** The contracts this project compiles, by name (file `infra/ledger/contracts/<name>.sol`). */
export type ContractName = 'BatchToken' | 'TraceLog' | 'TestUSDC' | 'LendingVault' | 'AuditAnchor';

/** A compiled contract: its ABI (solc JSON) and creation bytecode. */
export interface CompiledContract {
  abi: unknown[];
  bytecode: Hex;
}

export type CompiledContracts = Record<ContractName, CompiledContract>;

const CONTRACT_NAMES: readonly ContractName[] = ['BatchToken', 'TraceLog', 'TestUSDC', 'LendingVault', 'AuditAnchor'];

/** Compiler settings: fixed so builds are reproducible (hardhat node runs hardfork prague). */
export const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const;

interface SolcOutput {
  errors?: Array<{ severity: 'error' | 'warning' | 'info'; formattedMessage: string }>;
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

let cached: Promise<CompiledContracts> | undefined;

/**
 * Compiles BatchToken, TraceLog, TestUSDC (local chain only) and LendingVault with solc-js (standard JSON, optimizer on, evmVersion cancun),
 * resolving `@openzeppelin/...` imports from node_modules. The result is memoised per process.
 * Returns `{ BatchToken: { abi, bytecode }, TraceLog: …, TestUSDC: …, LendingVault: … }` (bytecode 0x-prefixed).
 * Throws an Error listing solc's messages when compilation fails or a source cannot be found.
 */
export function compileContracts(): Promise<CompiledContracts> {
  if (!cached) {
    cached = Promise.resolve().then(compileNow);
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}

function compileNow(): CompiledContracts {
  const root = repoRoot();
  const contractsDir = join(root, 'infra', 'ledger', 'contracts');
  const requireFromRoot = createRequire(join(root, 'package.json'));

  const sources: Record<string, { content: string }> = {};
  for (const name of CONTRACT_NAMES) {
    sources[`${name}.sol`] = { content: readFileSync(join(contractsDir, `${name}.sol`), 'utf8') };
  }

  const findImports = (path: string): { contents: string } | { error: string } => {
    try {
      if (path.startsWith('@openzeppelin/')) return { contents: readFileSync(requireFromRoot.resolve(path), 'utf8') };
      const local = join(contractsDir, path);
      if (existsSync(local)) return { contents: readFileSync(local, 'utf8') };
      return { error: `File not found: ${path}` };
    } catch (err) {
      return { error: `Cannot read ${path}: ${(err as Error).message}` };
    }
  };

  const input = { language: 'Solidity', sources, settings: SOLC_SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`Solidity compilation failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }

  const result = {} as CompiledContracts;
  for (const name of CONTRACT_NAMES) {
    const out = output.contracts?.[`${name}.sol`]?.[name];
    if (!out) throw new Error(`Solidity compilation produced no output for ${name}`);
    result[name] = { abi: out.abi, bytecode: `0x${out.evm.bytecode.object}` };
  }
  return result;
}

// Run as a script (`tsx infra/ledger/compile.ts`): compile and print a summary; writes nothing.
if (process.argv[1]?.endsWith('compile.ts')) {
  const started = performance.now();
  compileContracts().then(
    (contracts) => {
      const ms = Math.round(performance.now() - started);
      console.log(`solc ${solc.version()} (evmVersion ${SOLC_SETTINGS.evmVersion}, optimizer on): compiled in ${ms} ms`);
      for (const [name, c] of Object.entries(contracts)) {
        const entries = c.abi as Array<{ type: string }>;
        const count = (t: string) => entries.filter((e) => e.type === t).length;
        console.log(
          `  ${name}: ${(c.bytecode.length - 2) / 2} bytes, ${count('function')} functions, ${count('event')} events, ${count('error')} errors`,
        );
      }
    },
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    },
  );
}
