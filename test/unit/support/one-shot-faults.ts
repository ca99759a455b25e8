/**
 * One-shot faults for in-memory fakes: `fail(step, err)` makes the next call of `step` throw `err`
 * before doing anything; with `{after: true}` the call is applied first and then throws (the write
 * landed, its answer was lost). Fakes call `before(step)` at the start of a step and `after(step)`
 * once it is applied. Each fault fires once.
 */
export function oneShotFaults<Step extends string>() {
  const faults = new Map<Step, { err: Error; after: boolean }>();
  const fire = (step: Step, after: boolean) => {
    const f = faults.get(step);
    if (f && f.after === after) {
      faults.delete(step);
      throw f.err;
    }
  };
  return {
    fail(step: Step, err: Error, opts: { after?: boolean } = {}): void {
      faults.set(step, { err, after: !!opts.after });
    },
    before: (step: Step) => fire(step, false),
    after: (step: Step) => fire(step, true),
  };
}
