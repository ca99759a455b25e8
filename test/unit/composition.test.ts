import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { once, onFirstUse, putInPlace } from '../../shared/composition/once';
import { payoutDeps, payoutWebhookDeps } from '../../shared/composition/payouts';
import { payoutRepo, registryRepo } from '../../shared/composition/platform';
import { repoRoot } from '../../shared/runtime/paths';

/** The composition's build-once helper, the deferral built on it, and the rule that every accessor uses them. */

describe('once', () => {
  it('builds once per key and hands the same value back', () => {
    const key = {};
    const build = jest.fn(() => ({ built: true }));
    const first = once(key, build);
    expect(once(key, build)).toBe(first);
    expect(build).toHaveBeenCalledTimes(1);
    expect(once({}, build)).not.toBe(first);
    expect(build).toHaveBeenCalledTimes(2);
  });

  it('keeps a promise (concurrent callers share one build) and forgets it when it rejects', async () => {
    const key = {};
    let attempt = 0;
    const build = jest.fn(async () => {
      attempt += 1;
      if (attempt === 1) throw new Error('secret not readable yet');
      return `client ${attempt}`;
    });
    const a = once(key, build);
    expect(once(key, build)).toBe(a);
    await expect(a).rejects.toThrow('secret not readable yet');
    expect(build).toHaveBeenCalledTimes(1);
    await expect(once(key, build)).resolves.toBe('client 2');
    await expect(once(key, build)).resolves.toBe('client 2');
    expect(build).toHaveBeenCalledTimes(2);
  });

  it('keeps nothing when the build throws', () => {
    const key = {};
    expect(() =>
      once(key, () => {
        throw new Error('Missing environment variable X');
      }),
    ).toThrow('Missing environment variable X');
    expect(once(key, () => 'built')).toBe('built');
  });

  it('putInPlace puts a value in place of what the accessor would build', () => {
    const build = jest.fn(() => 'real');
    const accessor = (): string => once(accessor, build);
    putInPlace(accessor, 'stand-in');
    expect(accessor()).toBe('stand-in');
    expect(build).not.toHaveBeenCalled();
  });
});

describe('onFirstUse', () => {
  interface Greeter {
    greet(name: string): Promise<string>;
  }

  it('builds the adapter at its first method call, once, with the method bound to it', async () => {
    class Real implements Greeter {
      constructor(private readonly greeting: string) {}
      async greet(name: string) {
        return `${this.greeting}, ${name}`;
      }
    }
    const load = jest.fn(() => new Real('hello'));
    const greeter = onFirstUse<Greeter>(load);
    expect(load).not.toHaveBeenCalled();
    // Not a thenable: awaiting the stand-in gives the stand-in.
    expect(await greeter).toBe(greeter);
    expect(load).not.toHaveBeenCalled();
    await expect(greeter.greet('Amina')).resolves.toBe('hello, Amina');
    await expect(greeter.greet('Okello')).resolves.toBe('hello, Okello');
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('rejects the call whose build fails and builds again at the next call', async () => {
    let configured = false;
    const load = jest.fn((): Greeter => {
      if (!configured) throw new Error('Missing environment variable GREETER_URL');
      return { greet: async (name) => `hi ${name}` };
    });
    const greeter = onFirstUse<Greeter>(load);
    await expect(greeter.greet('a')).rejects.toThrow('GREETER_URL');
    configured = true;
    await expect(greeter.greet('b')).resolves.toBe('hi b');
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('composition accessors', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('reuse one client per container: stores and the payout provider are built once', () => {
    expect(payoutRepo()).toBe(payoutRepo());
    expect(registryRepo()).toBe(registryRepo());
    expect(payoutDeps().provider).toBe(payoutDeps().provider);
    expect(payoutDeps().workflow).toBe(payoutWebhookDeps().workflow);
  });

  it('read the payout provider’s configuration at its first call, not when the ports are handed out', async () => {
    delete process.env.PAYOUT_PROVIDER_CREDENTIALS;
    delete process.env.PAYOUT_PROVIDER_CREDENTIALS_SECRET_ARN;
    const deps = payoutDeps();
    await expect(deps.provider.getOrder('ord_1')).rejects.toThrow(/PAYOUT_PROVIDER_CREDENTIALS/);
  });

  it('build every client through once: no module-level let and no hand-written ??= cache in shared/composition', () => {
    const dir = join(repoRoot(), 'shared', 'composition');
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(join(dir, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
          .filter(({ line }) => /^(?:export )?let /.test(line) || line.includes('??=')),
      )
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(offenders).toEqual([]);
  });
});
