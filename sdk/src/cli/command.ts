/** What a command is (its description, parsed by args.ts) and what it runs with. */
import type { Murmur } from '../node-client.js';
import type { Input, GlobalValues, OptionSpecs } from './args.js';
import type { ExitCode } from './exit-codes.js';
import type { Output } from './output.js';

/** Standard input, a terminal or a pipe. */
export type Stdin = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };

export interface Context {
  out: Output;
  globals: GlobalValues;
  env: Readonly<Record<string, string | undefined>>;
  stdin: Stdin;
  /** The file `murmur login` writes. */
  configFile: string;
  /** The base URL from `--base-url`, MURMUR_BASE_URL or the stored config; undefined: the SDK's default. */
  baseUrl(): Promise<string | undefined>;
  /** A client with the key (`--api-key`, MURMUR_API_KEY, the stored one); exit 3 when there is none. */
  client(): Promise<Murmur>;
  /**
   * Runs `work` with a signal that Ctrl-C (SIGINT) aborts instead of ending the process, for a
   * command that has something to say before it stops (a job goes on without us).
   */
  interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export interface Command {
  /** `transcribe`, or a group's `jobs list`. */
  name: string;
  /** One line for `murmur --help`. */
  summary: string;
  /** The positional arguments in help: `FILE|URL`, `ID`, `WORDS…`. */
  args?: string;
  /** How many positional arguments: at least, at most. */
  arity: readonly [number, number];
  options: OptionSpecs;
  /** A paragraph for the command's own help. */
  description?: string;
  example: string;
  run(ctx: Context, input: Input): Promise<ExitCode | void>;
}
