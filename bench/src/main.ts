/**
 * `npm run bench [-- <name>…]`: runs the named benchmarks (all when none is named), writes
 * each result to bench/results/<name>.json and prints a short table. Exits non-zero only when
 * a benchmark could not run or its run is invalid (errors, non-200 responses, a crashed process); a missed target
 * is reported in the JSON (`targets_met`), not as a failure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BENCHMARKS } from './index';

const RESULTS_DIR = path.resolve(__dirname, '..', 'results');
const print = (line: string) => process.stdout.write(`${line}\n`);

function formatTable(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

function writeResult(name: string, result: Record<string, unknown>): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return path.relative(process.cwd(), file);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    print('usage: npm run bench [-- <benchmark>…]\n');
    for (const b of BENCHMARKS) print(`  ${b.name.padEnd(12)} ${b.description}`);
    return 0;
  }
  const unknown = args.filter((a) => !BENCHMARKS.some((b) => b.name === a));
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
    return 2;
  }
  const chosen = args.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => args.includes(b.name));

  let failed = false;
  for (const bench of chosen) {
    print(`\n== ${bench.name}: ${bench.description}`);
    const started = Date.now();
    try {
      const report = await bench.run((line) => print(line));
      const file = writeResult(bench.name, report.result);
      print('');
      for (const line of formatTable(report.table.headers, report.table.rows)) print(`  ${line}`);
      for (const note of report.notes) print(`  ${note}`);
      for (const f of report.failures) print(`  FAILED: ${f}`);
      print(`  → ${file} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
      if (report.failures.length > 0) failed = true;
    } catch (err) {
      failed = true;
      const message = err instanceof Error ? err.message : String(err);
      const file = writeResult(bench.name, { benchmark: bench.name, ok: false, error: message, timestamp: new Date().toISOString() });
      console.error(`\n${bench.name} failed: ${message}\n  → ${file}`);
    }
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
