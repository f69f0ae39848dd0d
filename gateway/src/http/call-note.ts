/**
 * What a call learnt about itself while it ran, for the request log (and the operators'
 * metrics) to read when its answer is complete: the route it matched, the MCP tool or JSON-RPC
 * method, the contract's error code, the credits it charged. One note per HTTP request, made by
 * requestContext and reachable from anywhere inside the call (operations, MCP tool handlers)
 * through AsyncLocalStorage, so neither front end threads it through signatures.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface CallNote {
  /** The route's template ("/api/v1/recordings/{id}") or "/mcp"; '' when none matched. */
  route: string;
  /** For /mcp: the tool called, else the JSON-RPC method. */
  tool: string;
  /** The contract's code of the failure answered (an MCP isError result's too). */
  errorCode: string;
  /** AI Credits the call charged. */
  credits: number;
}

const notes = new AsyncLocalStorage<CallNote>();

export function newCallNote(): CallNote {
  return { route: '', tool: '', errorCode: '', credits: 0 };
}

/** Runs `fn` (the rest of the request) with `note` as its call's note. */
export function runWithCallNote<T>(note: CallNote, fn: () => T): T {
  return notes.run(note, fn);
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
