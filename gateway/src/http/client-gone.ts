/**
 * A request whose client went away: what reading its body fails with (an AbortError, which the
 * front ends neither answer nor log as a bug), and how to tell that the client left before a
 * handler began to read (the events that say so were emitted before anyone listened).
 */
import type { IncomingMessage } from 'node:http';

/** The error of a body read cut short by the client, the caller's signal or the consumer. */
export function abortError(message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** The client reset or closed the connection before its request was answered: nobody is left to read for or answer. */
export function clientGone(req: IncomingMessage): boolean {
  return req.destroyed;
}

/** The refusal of a read that starts after the client left. */
export function goneError(): Error {
  return abortError('The client disconnected before its request was read.');
}
