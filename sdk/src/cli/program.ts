/**
 * The `murmur` program: finds the command in the arguments, parses its options, builds what it
 * runs with (output, key, base URL), runs it, and turns whatever it throws into one line on
 * stderr and an exit code. Everything it touches comes in {@link Io}, so tests run it in-process.
 */
import { readFileSync } from 'node:fs';
import { Murmur } from '../node-client.js';
import { globalsOf, Input, optionLines, parseOptions, GLOBAL_OPTIONS, type GlobalValues } from './args.js';
import type { Command, Context, Stdin } from './command.js';
import { configFile, readConfig, resolveApiKey, resolveBaseUrl, type StoredConfig } from './config.js';
import { CliError, errorMessage, EXIT, EXIT_CODE_TABLE, exitCodeOf, UsageError, type ExitCode } from './exit-codes.js';
import { Output, type Streams } from './output.js';
import { convert } from './commands/convert.js';
import { jobsCancel, jobsGet, jobsList, jobsWatch } from './commands/jobs.js';
import { login, logout } from './commands/login.js';
import { recordingsGet, recordingsList } from './commands/recordings.js';
import { ask, search } from './commands/search.js';
import { transcribe } from './commands/transcribe.js';
import { usage } from './commands/usage.js';

/** Every command, in the order `murmur --help` lists them. */
export const COMMANDS: readonly Command[] = [transcribe, jobsList, jobsGet, jobsCancel, jobsWatch, convert, recordingsList, recordingsGet, search, ask, usage, login, logout];

/** What the program reads and writes: the process's, or a test's. */
export interface Io extends Streams {
  stdin: Stdin;
  env: Readonly<Record<string, string | undefined>>;
  platform: string;
  home: string;
  /** Calls `onSignal` on Ctrl-C until the returned function is called. */
  onInterrupt(onSignal: () => void): () => void;
}

const GROUPS = new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!));
const TAKES_VALUE = new Set(Object.entries(GLOBAL_OPTIONS).filter(([, s]) => s.type === 'string').map(([n]) => `--${n}`));

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The command's words and the other arguments: global options may come before the command
 * (`murmur --json usage`), so they are stepped over (with their values) to find it.
 */
export function splitCommand(argv: readonly string[]): { words: string[]; rest: string[] } {
  const rest: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-' || arg === '--') break;
    rest.push(arg);
    if (TAKES_VALUE.has(arg) && i + 1 < argv.length) rest.push(argv[++i]!);
  }
  const words: string[] = [];
  if (i < argv.length && argv[i] !== '--' && argv[i] !== '-') {
    words.push(argv[i++]!);
    if (GROUPS.has(words[0]!) && i < argv.length && !argv[i]!.startsWith('-')) words.push(argv[i++]!);
  }
  return { words, rest: [...rest, ...argv.slice(i)] };
}

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => `${c.name}${c.args ? ` ${c.args}` : ''}`.length));
  return [
    `murmur ${version()}: the Murmur command line (transcription, conversions, search and jobs).`,
    '',
    'Usage: murmur COMMAND [ARGUMENTS] [OPTIONS]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${`${c.name}${c.args ? ` ${c.args}` : ''}`.padEnd(width)}  ${c.summary}`),
    '',
    'Options for every command:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    "Run 'murmur COMMAND --help' for a command's options. Start with 'murmur login'.",
    '',
    'Exit codes:',
    ...EXIT_CODE_TABLE.map(([code, meaning]) => `  ${String(code).padStart(3)}  ${meaning}`),
  ].join('\n');
}

export function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...members.map((c) => `${c.name}${c.args ? ` ${c.args}` : ''}`.length));
  return [`Usage: murmur ${group} COMMAND`, '', 'Commands:', ...members.map((c) => `  ${`${c.name}${c.args ? ` ${c.args}` : ''}`.padEnd(width)}  ${c.summary}`), '', `Run 'murmur ${group} COMMAND --help' for its options.`].join('\n');
}

export function commandHelp(command: Command): string {
  return [
    `Usage: murmur ${command.name}${command.args ? ` ${command.args}` : ''}${Object.keys(command.options).length ? ' [OPTIONS]' : ''}`,
    '',
    command.summary + '.',
    ...(command.description ? ['', ...wrap(command.description)] : []),
    ...(Object.keys(command.options).length ? ['', 'Options:', ...optionLines(command.options)] : []),
    '',
    'Options for every command:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Example:',
    `  ${command.example}`,
  ].join('\n');
}

/** A paragraph broken into lines of at most `width` characters. */
export function wrap(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

function checkArity(command: Command, positionals: readonly string[]): void {
  const [min, max] = command.arity;
  if (positionals.length < min) throw new UsageError(`missing ${command.args ?? 'arguments'}`, command.name);
  if (positionals.length > max) throw new UsageError(`unexpected argument '${positionals[max]}'`, command.name);
}

function contextOf(io: Io, globals: GlobalValues, out: Output): Context {
  const file = configFile(io.env, io.platform, io.home);
  let stored: Promise<StoredConfig> | undefined;
  const config = () => (stored ??= readConfig(file));
  const baseUrl = async () => resolveBaseUrl({ flag: globals.baseUrl, env: io.env.MURMUR_BASE_URL, stored: (await config()).baseUrl });
  return {
    out,
    globals,
    env: io.env,
    stdin: io.stdin,
    configFile: file,
    baseUrl,
    async client() {
      // The stored file is read only when neither the flag nor the environment has a key.
      const key = resolveApiKey({ flag: globals.apiKey, env: io.env.MURMUR_API_KEY }) ?? resolveApiKey({ stored: (await config()).apiKey });
      if (!key) throw new CliError("No API key: run 'murmur login', set MURMUR_API_KEY, or pass --api-key. Create a key in the app under Settings → Developer.", EXIT.authentication);
      const url = await baseUrl();
      return new Murmur({ apiKey: key.key, ...(url ? { baseUrl: url } : {}) });
    },
    async interruptible(work) {
      const controller = new AbortController();
      const stop = io.onInterrupt(() => controller.abort());
      try {
        return await work(controller.signal);
      } finally {
        stop();
      }
    },
  };
}

/** Runs the command line `argv` (without `node murmur`); answers the exit code. */
export async function run(argv: readonly string[], io: Io): Promise<ExitCode> {
  let out = new Output(io, false, false);
  try {
    const { words, rest } = splitCommand(argv);
    if (words.length === 0) {
      if (rest.includes('--version') || rest.includes('-V')) {
        out.text(version());
        return EXIT.ok;
      }
      const { values } = parseOptions('', {}, rest);
      if (!globalsOf(values).help) {
        out.error(mainHelp());
        return EXIT.usage;
      }
      out.text(mainHelp());
      return EXIT.ok;
    }
    if (words[0] === 'help') {
      const { words: asked } = splitCommand(rest);
      const named = COMMANDS.find((c) => c.name === asked.join(' '));
      out.text(named ? commandHelp(named) : asked[0] && GROUPS.has(asked[0]) ? groupHelp(asked[0]) : mainHelp());
      return EXIT.ok;
    }
    const name = words.join(' ');
    const command = COMMANDS.find((c) => c.name === name);
    if (!command) {
      if (GROUPS.has(words[0]!)) {
        const wantsHelp = rest.includes('--help') || rest.includes('-h');
        if (words.length === 1 && wantsHelp) {
          out.text(groupHelp(words[0]!));
          return EXIT.ok;
        }
        throw new UsageError(words.length === 1 ? `'murmur ${words[0]}' needs a command: ${COMMANDS.filter((c) => c.name.startsWith(`${words[0]} `)).map((c) => c.name.split(' ')[1]).join(', ')}` : `unknown command '${name}'`, words[0]);
      }
      throw new UsageError(`unknown command '${name}'`);
    }
    const { values, positionals } = parseOptions(command.name, command.options, rest);
    const globals = globalsOf(values);
    out = new Output(io, globals.json, globals.quiet);
    if (globals.help) {
      out.text(commandHelp(command));
      return EXIT.ok;
    }
    checkArity(command, positionals);
    return (await command.run(contextOf(io, globals, out), new Input(command.name, values, positionals))) ?? EXIT.ok;
  } catch (err) {
    out.error(errorMessage(err));
    if (io.env.MURMUR_DEBUG && err instanceof Error && !(err instanceof CliError)) out.error(err.stack ?? '');
    return exitCodeOf(err);
  }
}
