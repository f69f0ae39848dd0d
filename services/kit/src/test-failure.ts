/** Test support: the domain error a call failed with, so a test asserts codes rather than messages. */
import { MurmurError } from '@murmur/contract';

/** The MurmurError a call failed with (fails the test when it succeeded or failed otherwise). */
export async function failure(call: Promise<unknown>): Promise<MurmurError> {
  const outcome = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(outcome instanceof MurmurError)) throw new Error(`expected a MurmurError, got ${outcome === undefined ? 'success' : String(outcome)}`);
  return outcome;
}
