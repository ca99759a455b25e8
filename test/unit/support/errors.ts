import { DomainError } from '../../../shared/domain/errors';

/**
 * Awaits `p`, asserts that it rejected with a DomainError, and returns that error typed, so a
 * test can check its `code`, `status` and `details` without a cast.
 */
export async function domainErrorOf(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => new Error('expected a rejection, but the promise resolved'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  if (!(err instanceof DomainError)) throw new Error('unreachable: the assertion above failed');
  return err;
}
