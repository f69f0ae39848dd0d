/**
 * What a call learnt about itself while it ran, for the request log (and the operators'
 * metrics) to read when its answer is complete: the route it matched, the MCP tool or JSON-RPC
 * method, the contract's error code, the credits it charged. One note per HTTP request, made by
 * requestContext and reachable from anywhere inside the call (operations, MCP tool handlers)
 * through AsyncLocalStorage, so neither front end threads it through signatures.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Response } from 'express';

export interface CallNote {
  /** The route's template ("/api/v1/recordings/{id}") or "/mcp"; '' when none matched. */
  route: string;
  /** For /mcp: the tool called, else the JSON-RPC method. */
  tool: string;
  /** The contract's code of the failure answered (an MCP isError result's too). */
  errorCode: string;
  /** AI Credits the call charged. */
  credits: number;
  /** performance.now() when the call arrived: its latency's start for the log and the metrics. */
  startedAt: number;
}

const notes = new AsyncLocalStorage<CallNote>();
/** Where requestContext keeps the note on the response, for readers that run when it ends. */
const NOTE_LOCAL = 'callNote';
/** A response's status when its client went away before any answer (as nginx logs it). */
export const CLIENT_CLOSED_STATUS = 499;

export function newCallNote(): CallNote {
  return { route: '', tool: '', errorCode: '', credits: 0, startedAt: performance.now() };
}

/** Runs `fn` (the rest of the request) with `note` as its call's note, kept on `res` too. */
export function runWithCallNote<T>(res: Response, note: CallNote, fn: () => T): T {
  res.locals[NOTE_LOCAL] = note;
  return notes.run(note, fn);
}

/** The note of a response's call (a fresh one for a response requestContext did not see). */
export function noteOf(res: Response): CallNote {
  return ((res.locals[NOTE_LOCAL] as CallNote | undefined) ??= newCallNote());
}

/** The status a call answered: 499 when its client went away before any answer began. */
export function answeredStatus(res: Response): number {
  return res.headersSent ? res.statusCode : CLIENT_CLOSED_STATUS;
}

/** The running call's note; undefined outside a request (background work). */
export function callNote(): CallNote | undefined {
  return notes.getStore();
}

/** Records what the running call charged (operations call it where they present a charge). */
export function noteCredits(credits: number): void {
  const note = notes.getStore();
  if (note) note.credits += credits;
}
