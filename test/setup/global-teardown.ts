/** Stops the local stack that global-setup started (by its own process id). */
export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __COFFEE_STACK__?: { stop(): Promise<void> } }).__COFFEE_STACK__;
  await stack?.stop();
}
