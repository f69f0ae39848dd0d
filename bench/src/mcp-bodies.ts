/**
 * mcp-bodies (issue 30, item 6): the gateway's peak memory while four ~99 MB JSON-RPC bodies
 * arrive at /mcp at once — `ping`s from a key with no credits (the measurement: 273 MB →
 * 1.41 GB when each body was read whole before anything was checked), then `transcribe` calls of
 * 74 MB of audio from a key with credits. A body over 1 MB is now read on only for a transcribe or
 * convert call billing admitted, and only while the large bodies being received fit the gateway's
 * budget (two of the largest), the rest refused with 503; so the peak should stay well under the
 * Helm chart's 512 Mi limit for the gateway. The peak is the gateway process's VmHWM, reset
 * before each round.
 */
import { machineInfo, type Benchmark, type BenchmarkReport } from './benchmark';
import { RssSampler, type RssReport } from './rss';
import { createBenchUser, describe, redisNote, startStack, type BenchUser, type Stack } from './stack';
import { postStream } from './transcribe-audio';

const SETTINGS = { parallel: 4, body_bytes: 99_000_000, rss_interval_ms: 20, protocol_version: '2025-06-18' };
/** The gateway's memory limit in the Helm chart (deploy/helm/murmur/values.yaml). */
const TARGETS = { peak_mb_max: 512 * 1.048576 };
const PIECE = Buffer.alloc(64 * 1024, 'A');

/** A JSON-RPC body of exactly `bytes`: `head`, then base64 'A's (zero bytes once decoded), then `tail`. */
function* body(head: string, tail: string, bytes: number): Generator<Buffer | string> {
  yield head;
  let left = bytes - head.length - tail.length;
  for (; left >= PIECE.length; left -= PIECE.length) yield PIECE;
  if (left > 0) yield PIECE.subarray(0, left);
  yield tail;
}

const BODIES = {
  ping: { head: '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"', tail: '"}}' },
  transcribe: { head: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"transcribe","arguments":{"audio_base64":"', tail: '"}}}' },
};

interface Round {
  scenario: keyof typeof BODIES;
  statuses: number[];
  /** What each answer said, briefly (a JSON-RPC result, an isError code, or the error body's code). */
  answers: string[];
  errors: string[];
  seconds: number;
  rss: RssReport;
}

function answerOf(status: number, text: string): string {
  try {
    const json = JSON.parse(text) as { error?: { code?: string }; result?: { isError?: boolean; content?: Array<{ text?: string }> } };
    if (json.error?.code) return `${status} ${json.error.code}`;
    if (json.result?.isError) return `${status} isError ${(JSON.parse(json.result.content?.[0]?.text ?? '{}') as { error?: { code?: string } }).error?.code ?? ''}`;
    if (json.result) return `${status} result`;
  } catch {
    // not JSON: reported by status
  }
  return String(status);
}

async function round(stack: Stack, user: BenchUser, scenario: keyof typeof BODIES, log: (line: string) => void): Promise<Round> {
  const { head, tail } = BODIES[scenario];
  const headers = { ...user.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': SETTINGS.protocol_version };
  const sampler = new RssSampler({ gateway: stack.procs.pids().gateway! }, SETTINGS.rss_interval_ms);
  log(`${scenario}: ${SETTINGS.parallel} × ${SETTINGS.body_bytes / 1e6} MB at once …`);
  const started = performance.now();
  sampler.start();
  const settled = await Promise.allSettled(
    Array.from({ length: SETTINGS.parallel }, () => stack.procs.whileAlive(postStream(`${stack.gateway}/mcp`, headers, SETTINGS.body_bytes, body(head, tail, SETTINGS.body_bytes)))),
  );
  const rss = sampler.stop().gateway!;
  const result: Round = {
    scenario,
    statuses: settled.map((s) => (s.status === 'fulfilled' ? s.value.status : 0)),
    answers: settled.map((s) => (s.status === 'fulfilled' ? answerOf(s.value.status, s.value.body) : 'no answer')),
    errors: settled.flatMap((s) => (s.status === 'rejected' ? [describe(s.reason)] : [])),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    rss,
  };
  log(`${scenario}: ${result.answers.join(', ')} in ${result.seconds} s; gateway RSS ${rss.start_rss_mb} → peak ${rss.peak_mb} MB`);
  return result;
}

export const mcpBodiesBench: Benchmark = {
  name: 'mcp-bodies',
  description: 'peak gateway memory while 4 × 99 MB JSON-RPC bodies arrive at /mcp at once (pings without credits, transcribe calls with)',
  async run(log): Promise<BenchmarkReport> {
    const stack = await startStack(log, { services: ['auth', 'billing', 'library', 'transcription'] });
    try {
      const broke = await createBenchUser(stack, 'mcp-bodies-broke@bench.local', { monthlyCredits: 0 });
      const paid = await createBenchUser(stack, 'mcp-bodies-paid@bench.local', { monthlyCredits: 10_000 });
      const rounds = [await round(stack, broke, 'ping', log), await round(stack, paid, 'transcribe', log)];
      const peak = Math.max(...rounds.map((r) => r.rss.peak_mb));
      const targetsMet = { peak_under_helm_limit: peak <= TARGETS.peak_mb_max };
      const failures = rounds.flatMap((r) => (r.errors.length > 0 || r.statuses.includes(0) ? [`${r.scenario}: ${r.errors.join('; ') || 'no answer'}`] : []));
      return {
        result: { benchmark: 'mcp-bodies', timestamp: new Date().toISOString(), machine: machineInfo(), settings: SETTINGS, redis: redisNote(stack.redis), targets: TARGETS, rounds, peak_mb: peak, targets_met: targetsMet },
        table: {
          headers: ['scenario', 'answers', 'seconds', 'RSS before MB', 'peak MB'],
          rows: rounds.map((r) => [r.scenario, r.answers.join(', '), String(r.seconds), String(r.rss.start_rss_mb), String(r.rss.peak_mb)]),
        },
        notes: [`target: peak ≤ ${Math.round(TARGETS.peak_mb_max)} MB (the Helm limit, 512 Mi): ${targetsMet.peak_under_helm_limit ? 'met' : 'MISSED'}`],
        failures,
      };
    } finally {
      await stack.stop();
    }
  },
};
