/**
 * Operators' metrics (docs/decisions/0041-metrics.md): one prom-client registry per process, on
 * which every part of the process defines its metrics at load, and which the process's metrics
 * server (metrics-server.ts) serves in Prometheus' text format.
 *
 * Every rule is here:
 *  - names: every metric Murmur defines starts with METRIC_PREFIX; the process metrics are
 *    prom-client's defaults (`process_*`, `nodejs_*`);
 *  - labels: every value comes from a closed set the code names — route templates, tool names,
 *    RPC method paths, contract error codes, status codes, job states, operations — never a key,
 *    user id, token, request id, URL or any text a user sent. LabelledChildren also caps the
 *    series of one metric at MAX_SERIES_PER_METRIC: past it, new combinations count under
 *    OVERFLOW_LABEL instead of growing Prometheus without bound;
 *  - cost: a labelled child is looked up once per label combination and kept (LabelledChildren),
 *    so a request costs a few Map lookups and an inc()/observe() each, no label object.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CollectFunction } from 'prom-client';

export type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The prefix of every metric Murmur defines. */
export const METRIC_PREFIX = 'murmur_';

/**
 * Buckets of every duration histogram, in seconds: from a cached read (a few ms) to a long
 * transcription or conversion (minutes); one list so the dashboard's quantiles mean the same everywhere.
 */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** The most label combinations one metric keeps; more would only mean a label that is not a closed set. */
export const MAX_SERIES_PER_METRIC = 1000;

/** The label value every combination past MAX_SERIES_PER_METRIC is counted under. */
export const OVERFLOW_LABEL = 'other';

/** The label value of "no error" (a success has no error code). */
export const NO_ERROR = '';

let registry: Registry | undefined;
let processMetrics = false;

/** The process's one registry: every metric of the process is on it, and its metrics server serves it. */
export function metricsRegistry(): Registry {
  registry ??= new Registry();
  return registry;
}

/**
 * Adds prom-client's process metrics (CPU, memory, event-loop lag, GC, handles) to the registry,
 * once. Called by the metrics server when it starts, so a process that serves no metrics runs no
 * event-loop or GC observers for them.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry() });
}

function checkName(name: string): void {
  if (!name.startsWith(METRIC_PREFIX)) throw new Error(`metric ${name} must start with ${METRIC_PREFIX}`);
}

/** A counter on the process's registry. */
export function defineCounter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  checkName(name);
  return new Counter({ name, help, labelNames, registers: [metricsRegistry()] });
}

/** A duration histogram (seconds, DURATION_BUCKETS_SECONDS) on the process's registry. */
export function defineHistogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Histogram<L> {
  checkName(name);
  return new Histogram({ name, help, labelNames, buckets: [...DURATION_BUCKETS_SECONDS], registers: [metricsRegistry()] });
}

/**
 * A gauge on the process's registry; with `collect`, its value is read when scraped (e.g. from a
 * store) rather than kept up to date on every change.
 */
export function defineGauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], collect?: CollectFunction<Gauge<L>>): Gauge<L> {
  checkName(name);
  return new Gauge({ name, help, labelNames, registers: [metricsRegistry()], ...(collect ? { collect } : {}) });
}

/** Seconds since `startMs` (a `performance.now()` reading): what the duration histograms observe. */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}

type Tree<C> = Map<string | number, Tree<C> | C>;

/**
 * The labelled children of one metric, made once per label combination and kept: a lookup is
 * one Map.get per label, with no array or object made (up to four labels, passed as arguments).
 * Past MAX_SERIES_PER_METRIC combinations, a new one is counted as all-OVERFLOW_LABEL.
 */
export class LabelledChildren<C> {
  private readonly root: Tree<C> = new Map();
  private size = 0;
  private overflow: C | undefined;

  constructor(
    private readonly depth: number,
    private readonly make: (values: string[]) => C,
  ) {
    if (depth < 1 || depth > 4) throw new Error('LabelledChildren takes 1 to 4 labels');
  }

  get(a: string | number, b: string | number = '', c: string | number = '', d: string | number = ''): C {
    let node: Tree<C> = this.root;
    for (let i = 0; i < this.depth - 1; i++) {
      const key = i === 0 ? a : i === 1 ? b : c;
      let next = node.get(key) as Tree<C> | undefined;
      if (!next) {
        if (this.size >= MAX_SERIES_PER_METRIC) return this.overflowChild();
        next = new Map();
        node.set(key, next);
      }
      node = next;
    }
    const last = this.depth === 1 ? a : this.depth === 2 ? b : this.depth === 3 ? c : d;
    const found = node.get(last) as C | undefined;
    if (found !== undefined) return found;
    if (this.size >= MAX_SERIES_PER_METRIC) return this.overflowChild();
    const child = this.make([a, b, c, d].slice(0, this.depth).map(String));
    node.set(last, child);
    this.size++;
    return child;
  }

  private overflowChild(): C {
    this.overflow ??= this.make(new Array<string>(this.depth).fill(OVERFLOW_LABEL));
    return this.overflow;
  }
}

/** LabelledChildren of a counter: `children.get(...).inc()`. */
export function counterChildren<L extends string>(counter: Counter<L>, depth: number): LabelledChildren<Counter.Internal> {
  return new LabelledChildren(depth, (values) => counter.labels(...values));
}

/** LabelledChildren of a histogram: `children.get(...).observe(seconds)`. */
export function histogramChildren<L extends string>(histogram: Histogram<L>, depth: number): LabelledChildren<Histogram.Internal<L>> {
  return new LabelledChildren(depth, (values) => histogram.labels(...values));
}
