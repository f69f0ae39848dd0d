/**
 * What a command prints: its result on stdout (JSON with `--json`, text for people otherwise),
 * and on stderr only what is about the run — notes, progress bars on a terminal, and errors.
 */
import { NO_BAR, ProgressBar, type TtyStream } from './progress.js';

export interface Streams {
  stdout: { write(text: string): unknown };
  stderr: TtyStream;
}

export class Output {
  constructor(
    private readonly streams: Streams,
    readonly json: boolean,
    readonly quiet: boolean,
  ) {}

  /** Stderr, for a prompt. */
  get stderr(): TtyStream {
    return this.streams.stderr;
  }

  /** A result as JSON (pretty, one document). */
  data(value: unknown): void {
    this.streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Text for people on stdout, ending with one newline. */
  text(text: string): void {
    this.streams.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** A note about the run on stderr (saved as …, credits charged); none with `--json` or `--quiet`. */
  note(text: string): void {
    if (!this.json && !this.quiet) this.streams.stderr.write(`${text}\n`);
  }

  /** An error line on stderr, always. */
  error(text: string): void {
    this.streams.stderr.write(`${text}\n`);
  }

  /** A progress bar on stderr when it is a terminal, and neither `--json` nor `--quiet`. */
  bar(label: string): Pick<ProgressBar, 'update' | 'done'> {
    return this.streams.stderr.isTTY && !this.json && !this.quiet ? new ProgressBar(this.streams.stderr, label) : NO_BAR;
  }
}

/** Rows as aligned columns (the last one unpadded), with a header. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** Labelled lines (`Status   completed`), labels aligned. */
export function fields(pairs: ReadonlyArray<readonly [string, string | number | null | undefined]>): string {
  const shown = pairs.filter(([, v]) => v !== null && v !== undefined && v !== '');
  const width = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** Seconds as `m:ss` or `h:mm:ss`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** An API time as `2025-06-01 14:03 UTC`, or '' when absent. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** `1 credit`, `3 credits`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
