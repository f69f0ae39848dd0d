/** @murmur/bench — the benchmarks behind `npm run bench`, by name. */
import type { Benchmark } from './benchmark';
import { billingBench } from './billing-benchmark';
import { readPath } from './read-path';

export type { Benchmark, BenchmarkReport } from './benchmark';
export { readPath } from './read-path';

/** Every benchmark `npm run bench` knows, in the order it runs them. */
export const BENCHMARKS: readonly Benchmark[] = [readPath, billingBench];
