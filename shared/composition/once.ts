/**
 * Composition (docs/architecture.md#composition): each file of shared/composition builds the
 * ports of one capability (./payouts, ./lending, ./ledger, ./batches, …) from the environment; what
 * several capabilities use is in ./platform. This module is their one build-once helper and the
 * deferral built on it.
 *
 * A Lambda container serves many invocations; its clients and adapters (SDK clients, stores, the
 * ledger's signer, secrets read from Secrets Manager) are built once and reused by every later
 * invocation. Every accessor goes through {@link once}, so there is one place where that happens
 * and one rule for failures. The cache is per process: one Lambda container in AWS; the whole local
 * stack locally (every function's handler runs in that one process).
 *
 * Bundles: how the accessors are split into files does not change what a bundle carries, as long as
 * nothing is built at module level (esbuild drops unreached top-level declarations, but keeps a
 * top-level call). Measured with the esbuild options of infra/bundling.ts: 27 files split by outside
 * system and these capability files give the same bundles within 0.14 % (+19 to +317 bytes per
 * function, this helper), and the same cold loads within the noise of the shared machine.
 */

/** What {@link once} has built in this process, by key. */
const built = new Map<object, unknown>();

/**
 * The value `build()` made the first time `key` asked for it in this process, kept and handed back
 * to every later call. `key` is the module-level accessor that calls `once` (so one accessor, one
 * value): `export const batchRepo = (): BatchStore => once(batchRepo, () => new BatchRepository());`.
 * The accessor is a plain function, so a bundle that does not call it leaves it and its adapter out.
 *
 * Async-aware: a promise is kept as it is (concurrent callers share the one build) and forgotten
 * when it rejects, so the next call builds again (a secret not yet readable, an endpoint that did
 * not answer). A build that throws keeps nothing and throws to its caller.
 */
export function once<T>(key: object, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const value = build();
  built.set(key, value);
  if (value instanceof Promise) {
    value.catch(() => {
      if (built.get(key) === value) built.delete(key);
    });
  }
  return value;
}

/**
 * Puts `value` in place of what the accessor `key` would build, for the rest of this process (the
 * local stack's stand-ins that no Lambda bundle carries, e.g. the bundled forest-check areas).
 */
export function putInPlace<T>(key: () => T, value: T): void {
  built.set(key, value);
}

/** A port whose members are all asynchronous methods (what {@link onFirstUse} can stand in for). */
type AsyncMethods<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

/**
 * A stand-in for the adapter `load()` builds, which builds it (once, with {@link once}) only when
 * one of its methods is first called: a request that a rule refuses first never reads the
 * adapter's configuration or secret. `T` is the port (every member an async method); a failed
 * build (thrown or rejected) rejects that call and is tried again at the next.
 */
export function onFirstUse<T extends AsyncMethods<T>>(load: () => T | Promise<T>): T {
  const key = {};
  const real = () => once(key, async () => load());
  return new Proxy({} as T, {
    get: (_target, prop) =>
      // Not a promise (`then`), and no symbol-keyed protocol (inspection, iteration): methods only.
      typeof prop !== 'string' || prop === 'then'
        ? undefined
        : async (...args: unknown[]) => {
            const adapter = (await real()) as unknown as Record<string, (...a: unknown[]) => unknown>;
            return adapter[prop]!(...args);
          },
  });
}
