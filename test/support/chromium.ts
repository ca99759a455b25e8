import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Headless Chromium for the browser tests (the docs page, the public trace page). Debian's
 * `chromium` (`apt-get install -y chromium`), or CHROMIUM_BIN; where none is found the browser
 * tests are skipped with a message saying how to install it.
 */
const run = promisify(execFile);

/** The Chromium binary on PATH (or CHROMIUM_BIN), or undefined. */
function findChromium(): string | undefined {
  for (const name of [process.env.CHROMIUM_BIN, 'chromium', 'chromium-browser', 'google-chrome']) {
    if (!name) continue;
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      /* not on PATH */
    }
  }
  return undefined;
}

/** `describe` when Chromium is there, else `describe.skip` after saying (once, for `what`) how to install it. */
export function describeWithChromium(what: string): jest.Describe {
  if (findChromium()) return describe;
  process.stdout.write(`${what}: browser part skipped — no Chromium found. Install it with \`apt-get install -y chromium\` (Debian).\n`);
  return describe.skip;
}

/**
 * Runs headless Chromium on `url` with a fresh profile (removed afterwards), letting scripts run
 * for `virtualTimeMs` of virtual time; returns its stdout (e.g. the DOM with `--dump-dom`).
 * Errors: the process's, or a timeout after 60 s.
 */
export async function headlessChromium(args: string[], url: string, virtualTimeMs = 10_000): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-'));
  try {
    const { stdout } = await run(
      findChromium()!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        `--user-data-dir=${profile}`,
        `--virtual-time-budget=${virtualTimeMs}`,
        ...args,
        url,
      ],
      { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
    );
    return stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}
