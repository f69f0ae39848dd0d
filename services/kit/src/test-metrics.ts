/**
 * Test support: a Prometheus text exposition read back — what a scrape of a metrics server
 * (metrics-server.ts) says, as samples a test can sum by labels, and the metric names it declares.
 */

/** One sample line: `name{label="value",…} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  text: string;
  samples: Sample[];
  /** The names of the metrics declared (`# TYPE name kind`), with their kind. */
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses an exposition in Prometheus' text format. */
export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name = '', kind = ''] = line.split(' ');
      types.set(name, kind);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { text, samples, types };
}

/** GET `url` (a metrics server's /metrics), checked to answer 200 in the text format, parsed. */
export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? '')) throw new Error(`${url} is not Prometheus text: ${res.headers.get('content-type')}`);
  return parseExposition(text);
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sampleSum(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return scrape.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** Every label value of the scrape (what must never hold a key, a user id or a user's text). */
export function labelValues(scrape: Scrape): string[] {
  return [...new Set(scrape.samples.flatMap((s) => Object.values(s.labels)))];
}
