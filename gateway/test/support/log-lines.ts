/**
 * A logger whose lines a test reads: every component of a test system logs into it (parsed JSON
 * lines of pino), and a test can wait for a line — an event the system announces, such as a
 * worker that stopped — instead of sleeping and hoping it has happened.
 */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@murmur/kit';

export interface LogLine {
  level: string;
  msg?: string;
  [k: string]: unknown;
}

export interface RecordedLog {
  log: Logger;
  /** Every line so far. */
  lines: LogLine[];
  /** Resolves with the first line (logged so far or later) that `match` accepts. */
  line(match: (line: LogLine) => boolean): Promise<LogLine>;
}

/** A logger at `level` (default info) that keeps its lines. */
export function recordedLog(name: string, level = 'info'): RecordedLog {
  const lines: LogLine[] = [];
  const waiting: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const raw of chunk.toString('utf8').split('\n')) {
        if (!raw.trim()) continue;
        const line = JSON.parse(raw) as LogLine;
        lines.push(line);
        for (const w of waiting.filter((w) => w.match(line))) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(line);
        }
      }
      done();
    },
  });
  return {
    log: createLogger(name, level, sink),
    lines,
    line(match) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ match, resolve }));
    },
  };
}
