/**
 * A progress bar on stderr, for a terminal only: drawn over itself with a carriage return, at
 * most every 100 ms, and erased when done, so stdout stays the transcript alone. Rendering is
 * pure ({@link renderBar}); {@link ProgressBar} only decides when to draw.
 */

/** What a terminal stream offers a bar. */
export interface TtyStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Bytes as people read them: 999 B, 1.5 kB, 227 kB, 12.3 MB (powers of 1,000, as the API's 500 MB). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 'B';
  for (const u of units) {
    if (value < 1000) break;
    value /= 1000;
    unit = u;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
}

export interface BarState {
  label: string;
  /** 0–1, or null when the total is unknown (then no bar, the detail only). */
  fraction: number | null;
  detail?: string;
  /** The terminal's width: the line never exceeds it. */
  columns: number;
}

const BAR_MIN = 10;
const BAR_MAX = 40;

/** One line: `Uploading  [██████░░░░]  52%  118 kB / 227 kB`, fitted to `columns`. */
export function renderBar(state: BarState): string {
  const detail = state.detail ? `  ${state.detail}` : '';
  if (state.fraction === null) return fit(`${state.label}${detail}`, state.columns);
  const fraction = Math.min(1, Math.max(0, Number.isFinite(state.fraction) ? state.fraction : 0));
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  const room = state.columns - state.label.length - detail.length - percent.length - 5;
  const width = Math.min(BAR_MAX, room);
  if (width < BAR_MIN) return fit(`${state.label} ${percent}${detail}`, state.columns);
  const filled = Math.round(fraction * width);
  return `${state.label} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${percent}${detail}`;
}

function fit(line: string, columns: number): string {
  return line.length < columns ? line : `${line.slice(0, Math.max(0, columns - 2))}…`;
}

/** Bytes sent of a total (or of an unknown one), as a bar's detail. */
export function bytesDetail(loaded: number, total: number | null): string {
  return total === null ? formatBytes(loaded) : `${formatBytes(loaded)} / ${formatBytes(total)}`;
}

export class ProgressBar {
  private last = 0;
  private drawn = false;

  constructor(
    private readonly stream: TtyStream,
    private readonly label: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Redraws (at most every 100 ms, but always at 100 %). */
  update(fraction: number | null, detail?: string): void {
    const t = this.now();
    if (this.drawn && t - this.last < 100 && fraction !== 1) return;
    this.last = t;
    this.drawn = true;
    const columns = (this.stream.columns || 80) - 1;
    this.stream.write(`\r${renderBar({ label: this.label, fraction, ...(detail ? { detail } : {}), columns })}\x1b[K`);
  }

  /** Erases the bar. */
  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}

/** The bar of a stream that is not a terminal, or of `--json`/`--quiet`: draws nothing. */
export const NO_BAR: Pick<ProgressBar, 'update' | 'done'> = { update: () => undefined, done: () => undefined };
