/**
 * What the CLI's exit status says, one code per class of failure, so a script can branch on it
 * (retry on 7 and 8, top up on 6, fix the key on 3) without parsing messages; and the one line
 * on stderr each failure prints: the API's message with its code and request id.
 */
import { ApiError, ConnectionError, TimeoutError } from '../errors.js';
import { JobEndedError } from '../jobs.js';

export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  authentication: 3,
  notFound: 4,
  invalidRequest: 5,
  billing: 6,
  rateLimited: 7,
  unavailable: 8,
  jobEnded: 9,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The table `murmur --help` prints and sdk/README.md documents (a test keeps them equal). */
export const EXIT_CODE_TABLE: ReadonlyArray<readonly [ExitCode, string]> = [
  [EXIT.ok, 'success'],
  [EXIT.unexpected, 'an unexpected failure (a bug, an unreadable config file)'],
  [EXIT.usage, 'bad arguments: an unknown option, a missing argument, a file that does not exist'],
  [EXIT.authentication, 'no API key, or the key is wrong, revoked or expired (401), or may not do this (403)'],
  [EXIT.notFound, 'no such id (404)'],
  [EXIT.invalidRequest, 'the API refused the request (400, 409, 413, 415, 422)'],
  [EXIT.billing, 'no AI Credits left, or the spending cap is reached (402)'],
  [EXIT.rateLimited, 'rate limited (429), after the retries the SDK makes'],
  [EXIT.unavailable, 'Murmur failed or could not be reached: 5xx, connection refused, timeout'],
  [EXIT.jobEnded, 'the transcription job failed or was canceled'],
  [EXIT.interrupted, 'interrupted (Ctrl-C)'],
];

/** A failure the CLI itself decides, with its exit code. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.unexpected,
  ) {
    super(message);
  }
}

/** Bad arguments: the message says what is wrong, and the command's `--help` what is right. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help to point at (`jobs list`), or none for the top level. */
    readonly command?: string,
  ) {
    super(message, EXIT.usage);
  }
}

/** The exit code of an API status: the classes above, by HTTP status. */
export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.authentication;
  if (status === 404) return EXIT.notFound;
  if (status === 402) return EXIT.billing;
  if (status === 429) return EXIT.rateLimited;
  if (status >= 500) return EXIT.unavailable;
  if (status >= 400) return EXIT.invalidRequest;
  return EXIT.unexpected;
}

export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof ApiError) return exitCodeOfStatus(err.status);
  if (err instanceof JobEndedError) return EXIT.jobEnded;
  if (err instanceof ConnectionError || err instanceof TimeoutError) return EXIT.unavailable;
  return EXIT.unexpected;
}

/** The line (or two, for bad arguments) a failure prints on stderr. */
export function errorMessage(err: unknown): string {
  if (err instanceof UsageError) return `murmur: ${err.message}\nRun 'murmur ${err.command ? `${err.command} ` : ''}--help' for usage.`;
  if (err instanceof ApiError) return `Error (${err.code}): ${err.message}${err.requestId ? ` [${err.requestId}]` : ''}`;
  if (err instanceof JobEndedError) {
    const { id, status, error } = err.job;
    const what = status === 'canceled' ? `The transcription ${id} was canceled.` : `The transcription ${id} failed${error ? `: ${error.message.replace(/\.?$/, '.')}` : '.'}`;
    return `Error (${error?.code ?? `transcription_${status}`}): ${what}`;
  }
  if (err instanceof ConnectionError) return `Error: ${err.message.replace(/\.?$/, '.')} Is Murmur running there? Set --base-url or MURMUR_BASE_URL.`;
  if (err instanceof Error) return `Error: ${err.message}`;
  return `Error: ${String(err)}`;
}
