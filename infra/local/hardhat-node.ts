import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../shared/runtime/paths';

/** A running local hardhat node (chainId 31337, hardfork prague; automine until `setBlockTime`). */
export interface HardhatNode {
  /** `http://127.0.0.1:<port>` */
  rpcUrl: string;
  port: number;
  /** Process id of the hardhat node process itself (not a wrapper). */
  pid: number;
  /**
   * The chain's block time from now on, seconds: 0 mines each transaction the moment it arrives
   * (automine); above 0 the node makes a block every `seconds` (interval mining, automine off),
   * holding pending transactions until then. Errors: RangeError for a value outside
   * `parseBlockTimeSeconds`'s range; Error when the node refuses the JSON-RPC call.
   */
  setBlockTime(seconds: number): Promise<void>;
  /** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const KILL_AFTER_MS = 3_000;
const TAIL_LINES = 40;

/** A free TCP port on 127.0.0.1 (listen on port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('freePort: no port assigned'))));
    });
  });
}

/** The JavaScript file of hardhat's CLI, run with `process.execPath` (never through npx). */
function hardhatCli(root: string): string {
  const require = createRequire(join(root, 'package.json'));
  return join(dirname(require.resolve('hardhat/package.json')), 'internal', 'cli', 'bootstrap.js');
}

/**
 * Starts `hardhat node` (the real binary: node + hardhat's CLI JS) on 127.0.0.1 with
 * `infra/ledger/hardhat.config.cjs`. `port` 0 or undefined picks a free port. Its stdout/stderr go
 * to `logFile` (appended; folders created) when given; the last lines are also kept in memory for
 * error messages. Resolves once `eth_chainId` answers. Throws (after killing the process) when the
 * process exits early or is not ready within 30 s, with the tail of its output in the message.
 * The caller owns the process: call `stop()`; as a safety net it is also SIGKILLed when this
 * Node.js process exits.
 */
export async function startHardhatNode(opts: { port?: number; logFile?: string } = {}): Promise<HardhatNode> {
  const root = repoRoot();
  const port = opts.port ? opts.port : await freePort();
  const rpcUrl = `http://127.0.0.1:${port}`;

  let log: WriteStream | undefined;
  if (opts.logFile) {
    mkdirSync(dirname(opts.logFile), { recursive: true });
    log = createWriteStream(opts.logFile, { flags: 'a' });
  }
  const tail: string[] = [];
  const remember = (chunk: Buffer) => {
    log?.write(chunk);
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) tail.push(line);
    if (tail.length > TAIL_LINES) tail.splice(0, tail.length - TAIL_LINES);
  };

  const child = spawn(
    process.execPath,
    [
      hardhatCli(root),
      'node',
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
      '--config',
      join(root, 'infra', 'ledger', 'hardhat.config.cjs'),
    ],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
    },
  );
  if (child.pid === undefined) {
    log?.end();
    await new Promise<void>((resolve) => child.once('error', () => resolve()).once('close', () => resolve()));
    throw new Error('startHardhatNode: could not spawn the hardhat node process');
  }
  const pid = child.pid;
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);

  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const killOnExit = () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  process.once('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (isRunning(child)) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          if (isRunning(child)) child.kill('SIGKILL');
        }, KILL_AFTER_MS);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
      await new Promise<void>((resolve) => (log ? log.end(() => resolve()) : resolve()));
    })();
    return stopping;
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (!isRunning(child)) {
      await stop();
      throw new Error(`hardhat node exited during start-up (code ${child.exitCode}, signal ${child.signalCode}):\n${tail.join('\n')}`);
    }
    const chainId = await probeChainId(rpcUrl);
    if (chainId !== undefined) {
      if (chainId !== 31337) {
        await stop();
        throw new Error(`hardhat node at ${rpcUrl} answered chainId ${chainId}, expected 31337`);
      }
      return { rpcUrl, port, pid, stop, setBlockTime: (seconds) => setBlockTime(rpcUrl, seconds) };
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`hardhat node not ready on ${rpcUrl} within ${READY_TIMEOUT_MS / 1000} s:\n${tail.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The default block time of the local chain, seconds (Base, the chain the deploy guide names, makes a block every 2 s). */
export const DEFAULT_LEDGER_BLOCK_TIME_S = 2;
/** The longest block time the local chain accepts, seconds. */
const MAX_LEDGER_BLOCK_TIME_S = 60;

/**
 * `LEDGER_BLOCK_TIME_S` of the local stack: seconds between blocks of the local chain, a number
 * from 0 to 60 with at most three decimals (milliseconds); unset or blank → 2; 0 = every
 * transaction mined at once. Throws an Error naming the variable for anything else.
 */
export function parseBlockTimeSeconds(text: string | undefined): number {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return DEFAULT_LEDGER_BLOCK_TIME_S;
  const value = Number(trimmed);
  if (!/^\d+(\.\d{1,3})?$/.test(trimmed) || !(value >= 0 && value <= MAX_LEDGER_BLOCK_TIME_S)) {
    throw new Error(
      `LEDGER_BLOCK_TIME_S must be a number of seconds from 0 to ${MAX_LEDGER_BLOCK_TIME_S} (at most 3 decimals), got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** Switches a running hardhat node between automine (0) and interval mining every `seconds` (see HardhatNode.setBlockTime). */
async function setBlockTime(rpcUrl: string, seconds: number): Promise<void> {
  parseBlockTimeSeconds(String(seconds));
  const intervalMs = Math.round(seconds * 1000);
  // Interval first, then automine off: no moment where neither mines.
  await rpc(rpcUrl, 'evm_setIntervalMining', [intervalMs]);
  await rpc(rpcUrl, 'evm_setAutomine', [intervalMs === 0]);
}

/** One JSON-RPC call; throws with the node's error message when it answers an error. */
async function rpc(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
  if (!res.ok || body.error) throw new Error(`hardhat node refused ${method}: ${body.error?.message ?? `HTTP ${res.status}`}`);
  return body.result;
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** `eth_chainId` as a number, or undefined when nothing answers yet. */
async function probeChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string' ? Number.parseInt(body.result, 16) : undefined;
  } catch {
    return undefined;
  }
}
