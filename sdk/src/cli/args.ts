/**
 * Commands as data (name, arguments, options, example) and their parsing with Node's own
 * `util.parseArgs`: every option checked (type, allowed values, numbers) before anything is sent,
 * and a help text drawn from the same description, so the two never disagree.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './exit-codes.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's name in help: `N`, `ID`, `TEXT`. */
  value?: string;
  description: string;
  /** The only values allowed (checked before any call). */
  choices?: readonly string[];
  /** A whole number from `integer[0]` to `integer[1]`. */
  integer?: readonly [number, number];
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  json: { type: 'boolean', description: 'Print machine-readable JSON on stdout' },
  quiet: { type: 'boolean', short: 'q', description: 'No progress bars or notes on stderr (errors still print)' },
  'base-url': { type: 'string', value: 'URL', description: 'The Murmur to call (default $MURMUR_BASE_URL, the stored one, else http://localhost:8080)' },
  'api-key': { type: 'string', value: 'KEY', description: 'The API key (default $MURMUR_API_KEY, else the one `murmur login` stored)' },
  help: { type: 'boolean', short: 'h', description: 'Show this help' },
} as const satisfies OptionSpecs;

/** The parsed global options. */
export interface GlobalValues {
  json: boolean;
  quiet: boolean;
  baseUrl?: string;
  apiKey?: string;
  help: boolean;
}

/** A command's arguments and options, read with their checks. */
export class Input {
  constructor(
    readonly command: string,
    private readonly values: Readonly<Record<string, string | boolean | undefined>>,
    readonly positionals: readonly string[],
  ) {}

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  string(name: string): string | undefined {
    const v = this.values[name];
    return typeof v === 'string' ? v : undefined;
  }

  /** A value already checked against its `choices`. */
  choice<T extends string>(name: string, _choices: readonly T[]): T | undefined {
    return this.string(name) as T | undefined;
  }

  /** A value already checked as an integer in its range. */
  integer(name: string): number | undefined {
    const v = this.string(name);
    return v === undefined ? undefined : Number(v);
  }

  /** The positional arguments as one text (`murmur search budget friday`). */
  words(): string {
    return this.positionals.join(' ');
  }
}

/** Why parseArgs refused, in the CLI's words. */
function usageOf(err: unknown, command: string): UsageError {
  const e = err as { code?: string; message?: string };
  const option = /'(-[^' ]+)/.exec(e.message ?? '')?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`unknown option ${option ?? ''}`.trim(), command);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(option ? `${option} ${/argument missing/.test(e.message ?? '') ? 'needs a value' : 'takes no value'}` : (e.message ?? 'invalid option'), command);
    default:
      return new UsageError(e.message ?? String(err), command);
  }
}

/** Parses `args` against the command's options and the global ones; checks values, not arity. */
export function parseOptions(command: string, options: OptionSpecs, args: readonly string[]): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const all: OptionSpecs = { ...GLOBAL_OPTIONS, ...options };
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...args],
      options: Object.fromEntries(Object.entries(all).map(([name, spec]) => [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw usageOf(err, command);
  }
  const values: Record<string, string | boolean | undefined> = {};
  for (const [name, raw] of Object.entries(parsed.values)) {
    // A repeated option keeps its last value, as most command lines do.
    const value = Array.isArray(raw) ? raw.at(-1) : raw;
    const spec = all[name];
    if (spec?.type === 'string' && typeof value === 'string') {
      if (spec.choices && !spec.choices.includes(value)) throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')} (not '${value}')`, command);
      if (spec.integer) {
        const [min, max] = spec.integer;
        const n = Number(value);
        if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (not '${value}')`, command);
      }
    }
    values[name] = value;
  }
  return { values, positionals: parsed.positionals };
}

/** The global options of parsed values. */
export function globalsOf(values: Readonly<Record<string, string | boolean | undefined>>): GlobalValues {
  const baseUrl = values['base-url'];
  const apiKey = values['api-key'];
  return {
    json: values.json === true,
    quiet: values.quiet === true,
    help: values.help === true,
    ...(typeof baseUrl === 'string' ? { baseUrl } : {}),
    ...(typeof apiKey === 'string' ? { apiKey } : {}),
  };
}

/** The options' lines of a help text, aligned. */
export function optionLines(options: OptionSpecs): string[] {
  const heads = Object.entries(options).map(([name, spec]) => {
    const value = spec.value ?? spec.choices?.join('|');
    return [`${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.type === 'string' && value ? ` ${value}` : ''}`, spec.description] as const;
  });
  const width = Math.max(...heads.map(([head]) => head.length));
  return heads.map(([head, description]) => `  ${head.padEnd(width)}  ${description}`);
}
