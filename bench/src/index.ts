/** @murmur/bench — the benchmarks behind `npm run bench`, by name. */
import { recordingWordsBench } from './recording-words';
import { urlWebhooksBench } from './url-webhooks';
import type { Benchmark } from './benchmark';
import { billingBench } from './billing-benchmark';
import { convertBench } from './convert-benchmark';
import { convertQualityBench } from './convert-quality';
import { faultsBench } from './faults';
import { jobsBench } from './jobs';
import { liveBench } from './live';
import { mcpBench } from './mcp';
import { mcpBodiesBench } from './mcp-bodies';
import { readPath } from './read-path';
import { searchQualityBench } from './search-quality';
import { searchSpeedBench } from './search-speed';
import { transcribeBench } from './transcribe';

export type { Benchmark, BenchmarkReport } from './benchmark';
export { readPath } from './read-path';
export { mcpBench } from './mcp';
export { mcpBodiesBench } from './mcp-bodies';
export { convertBench } from './convert-benchmark';
export { convertQualityBench } from './convert-quality';
export { searchQualityBench } from './search-quality';
export { searchSpeedBench } from './search-speed';
export { transcribeBench } from './transcribe';
export { faultsBench } from './faults';
export { jobsBench } from './jobs';
export { urlWebhooksBench } from './url-webhooks';
export { liveBench } from './live';

/** Every benchmark `npm run bench` knows, in the order it runs them. */
export const BENCHMARKS: readonly Benchmark[] = [readPath, recordingWordsBench, mcpBench, mcpBodiesBench, billingBench, convertBench, convertQualityBench, searchQualityBench, searchSpeedBench, transcribeBench, jobsBench, urlWebhooksBench, liveBench, faultsBench];
