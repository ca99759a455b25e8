import { DomainError } from '../../../shared/domain/errors';
import { ERROR_STATUS, errorHeaders } from '../../../shared/http/error-status';

/**
 * Awaits `p`, asserts that it rejected with a DomainError, and returns that error typed, so a
 * test can check its `code` and `details` (and, through `onTheWire`, its HTTP status) without a cast.
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

/**
 * A domain error as the API answers it: a copy of the error (same class, message, code, details,
 * cause) with the HTTP `status` of its code and the `headers` its response adds (`Retry-After`;
 * absent when none), as shared/http/error-status.ts maps them. Any other value comes back unchanged.
 * Unit tests of use cases and adapters assert the status on the wire through it: domain errors
 * themselves carry no HTTP.
 */
export function onTheWire<T>(err: T): T & { status?: number; headers?: Record<string, string> } {
  if (!(err instanceof DomainError)) return err as T & { status?: number };
  const copy = Object.create(Object.getPrototypeOf(err)) as DomainError & { status?: number; headers?: Record<string, string> };
  for (const key of Reflect.ownKeys(err)) Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(err, key)!);
  copy.status = ERROR_STATUS[err.code];
  const headers = errorHeaders(err);
  if (Object.keys(headers).length) copy.headers = headers;
  return copy as unknown as T & { status?: number; headers?: Record<string, string> };
}

/** `promise`, its rejection seen on the wire (see `onTheWire`): `await expect(wire(p)).rejects.toMatchObject({ code, status })`. */
export function wire<T>(promise: Promise<T>): Promise<T> {
  return promise.catch((err: unknown) => {
    throw onTheWire(err);
  });
}
