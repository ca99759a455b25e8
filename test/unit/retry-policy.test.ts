import { UnreachableError, unreachableRetryPolicy } from '../../shared/runtime/retry';

describe('unreachableRetryPolicy (cockatiel)', () => {
  it('retries only UnreachableError, up to `attempts` in total, then throws the last one', async () => {
    const seen: number[] = [];
    const failures: string[] = [];
    const policy = unreachableRetryPolicy({ attempts: 3, backoffMs: 0 });
    const err = await policy
      .execute(
        async (_signal, n) => {
          seen.push(n);
          throw new UnreachableError(`HTTP 50${n}`, { status: 500 + n });
        },
        (f, n, attempts) => failures.push(`${n}/${attempts} ${f.problem}`),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect(err).toMatchObject({ problem: 'HTTP 503', status: 503 });
    expect(seen).toEqual([1, 2, 3]);
    expect(failures).toEqual(['1/3 HTTP 501', '2/3 HTTP 502', '3/3 HTTP 503']);
  });

  it('returns the first answer and passes any other error through at once', async () => {
    const policy = unreachableRetryPolicy({ attempts: 4, backoffMs: 0 });
    await expect(
      policy.execute(async (_s, n) => {
        if (n < 3) throw new UnreachableError('ECONNRESET');
        return `answer ${n}`;
      }),
    ).resolves.toBe('answer 3');

    let calls = 0;
    const refusal = new Error('HTTP 401');
    await expect(
      policy.execute(async () => {
        calls++;
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(calls).toBe(1);
  });

  it("waits backoffMs, then doubles (no jitter); a failure's retryAfterMs wins for that wait", async () => {
    const waits: number[] = [];
    const policy = unreachableRetryPolicy({ attempts: 5, backoffMs: 7, sleep: async (ms) => void waits.push(ms) });
    await policy.execute(async (_s, n) => {
      if (n === 3) throw new UnreachableError('HTTP 429', { status: 429, retryAfterMs: 1000 });
      if (n < 5) throw new UnreachableError('HTTP 503');
      return n;
    });
    expect(waits).toEqual([7, 14, 1000, 56]);
  });

  it("uses cockatiel's own timer when no sleep is injected", async () => {
    const policy = unreachableRetryPolicy({ attempts: 3, backoffMs: 40 });
    const t0 = Date.now();
    await expect(
      policy.execute(async () => {
        throw new UnreachableError('ECONNREFUSED');
      }),
    ).rejects.toBeInstanceOf(UnreachableError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(40 + 80 - 5);
  });

  it("aborts each attempt's signal after timeoutMs", async () => {
    const policy = unreachableRetryPolicy({ attempts: 2, backoffMs: 1, timeoutMs: 50 });
    let calls = 0;
    const t0 = Date.now();
    const err = await policy
      .execute((signal) => {
        calls++;
        return new Promise<never>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new UnreachableError('timeout', { cause: signal.reason })));
        });
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ problem: 'timeout' });
    expect(calls).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100 - 5);
  });

  it('runs concurrent calls with a timeout without piling listeners on one shared signal', async () => {
    const spy = jest.spyOn(AbortSignal.prototype, 'addEventListener');
    try {
      const policy = unreachableRetryPolicy({ attempts: 2, backoffMs: 0, timeoutMs: 1000 });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          policy.execute(async () => {
            await new Promise((r) => setTimeout(r, 5));
            return i;
          }),
        ),
      );
      expect(answers).toHaveLength(30);
      const perSignal = new Map<unknown, number>();
      for (const target of spy.mock.contexts) perSignal.set(target, (perSignal.get(target) ?? 0) + 1);
      expect(Math.max(0, ...perSignal.values())).toBeLessThan(10); // Node warns (MaxListenersExceededWarning) beyond 10
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a nonsensical configuration', () => {
    expect(() => unreachableRetryPolicy({ attempts: 0, backoffMs: 1 })).toThrow(TypeError);
    expect(() => unreachableRetryPolicy({ attempts: 1.5, backoffMs: 1 })).toThrow(TypeError);
    expect(() => unreachableRetryPolicy({ attempts: 2, backoffMs: -1 })).toThrow(TypeError);
    expect(() => unreachableRetryPolicy({ attempts: 2, backoffMs: 1, timeoutMs: 0 })).toThrow(TypeError);
  });
});
