import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../shared/runtime/paths';

/** What a running local stack reports about itself (infra/local/start.ts LOCAL_STACK_INFO_FILE). */
interface StackInfo {
  url: string;
  dataDir: string;
  endpoints: Record<string, string>;
  pids: Record<string, number>;
}

export interface StackProcess {
  info: StackInfo;
  child: ChildProcess;
  /** The last 20 kB the stack printed (for failure reports). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `infra/local/start.ts` as its own process (exactly what `npm start` runs) on free ports
 * with a temporary LOCAL_DATA_DIR, and waits until it reports ready. `stop()` sends SIGTERM, waits
 * for the exit, and makes sure the children it reported (DynamoDB Local, hardhat) are gone.
 */
export async function startStackProcess(env: Record<string, string> = {}, timeoutMs = 90_000): Promise<StackProcess> {
  const iamOn = !/^(false|0|off|no)$/i.test((env.LOCAL_IAM_ENFORCE ?? process.env.LOCAL_IAM_ENFORCE ?? '').trim());
  // IAM enforcement's role policies come from a CDK synth (tens of seconds when the sources changed): cached first, outside the start timeout.
  if (iamOn)
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/local/iam/prepare.ts'], { cwd: repoRoot(), timeout: 600_000 });
  const dataDir = mkdtempSync(join(tmpdir(), 'coffee-trace-test-'));
  const infoFile = join(dataDir, 'stack-info.json');
  // STACK_NODE_ARGS: extra node options of the stack process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
  // (docs/powertools.md#profiling-the-local-stack); NODE_OPTIONS does not accept --cpu-prof.
  const nodeArgs = (process.env.STACK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'infra/local/start.ts'], {
    cwd: repoRoot(),
    env: {
      ...process.env,
      PORT: '0',
      LOCAL_DATA_DIR: dataDir,
      LOCAL_STACK_INFO_FILE: infoFile,
      LOCAL_TIME_SCALE: '0.01',
      PAYOUT_SANDBOX_SETTLE_MS: '200',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // STACK_LOG_FILE: everything the stack prints is also appended to that file (kept after the stack
  // stops), each line after the time it arrived (ISO 8601, UTC).
  const logFile = process.env.STACK_LOG_FILE;
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
    if (!logFile) return;
    const at = new Date().toISOString();
    appendFileSync(
      logFile,
      d
        .toString()
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => `${at} ${l}\n`)
        .join(''),
    );
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(infoFile)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`local stack did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const info = JSON.parse(readFileSync(infoFile, 'utf8')) as StackInfo;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    for (const pid of Object.values(info.pids)) {
      try {
        process.kill(pid, 0);
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { info, child, output: () => output, stop };
}

/**
 * Runs the calling test file against its own local stack, started with `env` (see
 * {@link startStackProcess}), instead of the int project's shared one: registers a `beforeAll`
 * that starts it and points ./api.ts (TEST_STACK_URL, TEST_STACK_DATA_DIR) at it, and an
 * `afterAll` that restores those variables and stops it. Returns the running stack (call it inside
 * tests or hooks). `startTimeoutMs` is the hook's timeout (starting a second stack beside the
 * shared one on a loaded machine is slow).
 */
export function useOwnStack(env: Record<string, string> = {}, startTimeoutMs = 180_000): () => StackProcess {
  let stack: StackProcess | undefined;
  const saved = { url: process.env.TEST_STACK_URL, dir: process.env.TEST_STACK_DATA_DIR };
  beforeAll(async () => {
    stack = await startStackProcess(env, startTimeoutMs);
    process.env.TEST_STACK_URL = stack.info.url;
    process.env.TEST_STACK_DATA_DIR = stack.info.dataDir;
  }, startTimeoutMs + 10_000);
  afterAll(async () => {
    process.env.TEST_STACK_URL = saved.url;
    process.env.TEST_STACK_DATA_DIR = saved.dir;
    await stack?.stop();
  });
  return () => {
    if (!stack) throw new Error('the own stack is not running (useOwnStack: call it inside tests or hooks)');
    return stack;
  };
}
