/**
 * `npm run bench -- live` (issue 33): live transcription on real speech sent at real-time pace
 * over real WebSockets to the gateway (GET /api/v1/listen → transcription.StreamTranscription →
 * one ps-live recognizer per stream), on the real topology.
 *
 * The stream: the five LibriVox utterances of Debian's pocketsphinx-testdata (24.7 s of speech),
 * 1 s of silence first, 1.5 s between utterances, 2 s after the last: 33.7 s of 16 kHz linear16,
 * sent in 100 ms frames as a microphone would hand them over, then `{"type":"close"}`.
 *  1. final latency: per utterance, its final's arrival − the moment its last audio was sent;
 *  2. partial cadence: while the detector hears speech, the gaps speech_started → partial →
 *     partial → …;
 *  3. concurrency: N = 1, 2, 4, 6, … streams at once (one user each: at most 2 streams and 10
 *     AI calls a minute per user), until a level does not keep real time — the recognizer's lag
 *     behind the audio grows by more than 0.5 s over the stream, or an utterance gets no final.
 *     Per level: latencies, cadence, lag, the CPU of every process (the transcription service
 *     with its recognizers), the recognizers' memory, and what each stream was charged.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_PLAN_ID, planById } from '@murmur/billing';
import { wordErrorRate } from '@murmur/transcription';
import { machineInfo, type Benchmark, type BenchmarkReport } from './benchmark';
import { distribution, LAG_GROWTH_MAX_MS, streamFigures, type Distribution, type StreamFigures } from './live-metrics';
import { runStream, speechStream, type SpeechStream, type StreamRecord } from './live-stream';
import { cpuSecondsOf, machineCpuSeconds } from './processes';
import { descendants, pssBytes, statusBytes } from './rss';
import { NOISE_PERCENT } from './rounds';
import { createBenchUser, describe, redisNote, startStack, type BenchUser, type Stack } from './stack';
import { librivoxUtterances } from './transcribe-audio';

const SETTINGS = {
  engine: 'pocketsphinx',
  encoding: 'linear16',
  sample_rate: 16_000,
  frame_ms: 100,
  lead_seconds: 1,
  gap_seconds: 1.5,
  tail_seconds: 2,
  /** Streams at once, in order; the sweep stops after the first level that does not keep real time. BENCH_LIVE_LEVELS=1,2,… overrides. */
  levels: [1, 2, 4, 6, 8, 10, 12, 14, 16],
  /** Streams of a level start this far apart (so their utterances do not all end at the same instant), the last at most max_spread_seconds after the first. */
  stagger_seconds: 0.5,
  max_spread_seconds: 4,
  /** No level starts when the sweep would pass this (a bench run stays near 5 minutes). */
  sweep_budget_seconds: 270,
  close_timeout_ms: 30_000,
  /** Before a level: wait (at most this long) until processes outside the benchmark use under NOISE_PERCENT of a core over a second. */
  max_quiet_wait_seconds: 10,
  /** A level that falls behind while others used the machine runs again once (after waiting for quiet). */
  noisy_retries: 1,
  monthly_credits: 100_000,
  memory_sample_ms: 250,
  log_level: 'warn',
};

const TARGETS = {
  /** Single stream: median final latency from the last audio of an utterance sent. */
  final_latency_p50_ms_max: 1_000,
  /** Single stream: "a partial at least every 500 ms while someone speaks", read as the 90th percentile of the gaps. */
  partial_gap_p90_ms_max: 500,
};

const MB = 1_000_000;
const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function levelsOf(env: string | undefined): number[] {
  if (!env) return SETTINGS.levels;
  const levels = env.split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
  if (levels.length === 0) throw new Error(`BENCH_LIVE_LEVELS=${env}: expected a comma-separated list of stream counts`);
  return levels;
}

/** Peak memory of the transcription process and of its recognizers (its descendants), and of the gateway, sampled. */
function memorySampler(transcriptionPid: number, gatewayPid: number, intervalMs: number) {
  const peak = { transcription_rss: 0, recognizers_rss: 0, recognizers_pss: 0, recognizers: 0, gateway_rss: 0 };
  const sample = () => {
    const kids = descendants(transcriptionPid);
    let rss = 0;
    let pss = 0;
    for (const pid of kids) {
      rss += statusBytes(pid, 'VmRSS') ?? 0;
      pss += pssBytes(pid) ?? 0;
    }
    peak.recognizers = Math.max(peak.recognizers, kids.length);
    peak.recognizers_rss = Math.max(peak.recognizers_rss, rss);
    peak.recognizers_pss = Math.max(peak.recognizers_pss, pss);
    peak.transcription_rss = Math.max(peak.transcription_rss, statusBytes(transcriptionPid, 'VmRSS') ?? 0);
    peak.gateway_rss = Math.max(peak.gateway_rss, statusBytes(gatewayPid, 'VmRSS') ?? 0);
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop(streams: number) {
      clearInterval(timer);
      return {
        transcription_peak_rss_mb: r1(peak.transcription_rss / MB),
        recognizers_peak: peak.recognizers,
        recognizers_peak_rss_mb: r1(peak.recognizers_rss / MB),
        recognizers_peak_pss_mb: r1(peak.recognizers_pss / MB),
        pss_mb_per_stream: r1(peak.recognizers_pss / MB / streams),
        rss_mb_per_stream: r1(peak.recognizers_rss / MB / streams),
        gateway_peak_rss_mb: r1(peak.gateway_rss / MB),
      };
    },
  };
}

/** CPU seconds of each process of the stack (with its reaped children: the recognizers), the bench process, and the machine. */
function cpuRead(pids: Record<string, number>) {
  const seconds: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) seconds[name] = cpuSecondsOf(pid, true) ?? 0;
  // The transcription service's own thread pool and event loop (the relay), apart from its recognizers.
  if (pids.transcription !== undefined) seconds.transcription_node_only = cpuSecondsOf(pids.transcription) ?? 0;
  const self = process.cpuUsage();
  seconds.bench = (self.user + self.system) / 1e6;
  return { at: performance.now(), seconds, busy: machineCpuSeconds().machine_busy ?? 0 };
}

/** Percent of one core processes outside ours used over `ms` (the machine's busy time minus our processes and their children). */
async function othersPercent(pids: Record<string, number>, ms: number): Promise<number> {
  const sum = (r: ReturnType<typeof cpuRead>) => Object.entries(r.seconds).reduce((a, [name, v]) => (name === 'transcription_node_only' ? a : a + v), 0);
  const before = cpuRead(pids);
  await sleep(ms);
  const after = cpuRead(pids);
  const wall = (after.at - before.at) / 1000;
  return Math.max(0, r1(((after.busy - before.busy - (sum(after) - sum(before))) / wall) * 100));
}

/** Waits until others use under NOISE_PERCENT of a core (at most max_quiet_wait_seconds); what they used last, and how long it waited. */
async function waitForQuiet(pids: Record<string, number>): Promise<{ others_percent: number; waited_seconds: number }> {
  const started = performance.now();
  let others = await othersPercent(pids, 1_000);
  while (others > NOISE_PERCENT && performance.now() - started < SETTINGS.max_quiet_wait_seconds * 1000) others = await othersPercent(pids, 1_000);
  return { others_percent: others, waited_seconds: r1((performance.now() - started) / 1000) };
}

interface LevelResult {
  streams: number;
  /** Others' CPU (percent of one core) in the second before the level started, after waiting for it to drop. */
  before_start: { others_percent: number; waited_seconds: number };
  keeps_real_time: boolean;
  final_latency_p50_within_target: boolean;
  final_latency_ms: Distribution;
  final_latency_from_utterance_end_ms: Distribution;
  partial_gap_ms: Distribution;
  first_partial_ms: Distribution;
  lag_ms: Distribution;
  /** The largest lag growth of any stream of the level. */
  max_lag_growth_ms: number;
  close_to_closed_ms: Distribution;
  missing_finals: number;
  /** Streams the server ended with an error (their close code, error code and what they had received). */
  stream_errors: string[];
  wer_mean: number;
  /** Percent of one core per process over the level (transcription includes its recognizers, reaped at each stream's end; transcription_node_only is the service's Node.js process without them). */
  cpu_percent: Record<string, number>;
  /** The transcription service's CPU (recognizers included) per second of audio streamed: cores one stream keeps busy. */
  transcription_cpu_cores_per_stream: number;
  other_cpu_percent: number;
  noisy: boolean;
  memory: ReturnType<ReturnType<typeof memorySampler>['stop']>;
  max_send_late_ms: number;
  wall_seconds: number;
  per_stream: Array<{
    user: number;
    ended: string;
    keeps_real_time: boolean;
    final_latency_ms: Array<number | null>;
    lag_growth_ms: number;
    lag_by_utterance_ms: number[];
    partials: number;
    close_to_closed_ms: number;
    wer: number;
    seconds_sent: number;
    duration_seconds: number;
    credits_charged: number;
    credits_expected: number;
  }>;
}

async function runLevel(stack: Stack, users: readonly BenchUser[], speech: SpeechStream, n: number, creditsPerMinute: number, reference: string): Promise<{ level: LevelResult; failures: string[] }> {
  const pids = stack.procs.pids();
  const memory = memorySampler(pids.transcription!, pids.gateway!, SETTINGS.memory_sample_ms);
  const step = n > 1 ? Math.min(SETTINGS.stagger_seconds, SETTINGS.max_spread_seconds / (n - 1)) : 0;
  const quiet = await waitForQuiet(pids);
  const before = cpuRead(pids);
  const settled = await stack.procs.whileAlive(
    Promise.allSettled(
      users.slice(0, n).map(async (user, i) => {
        await sleep(i * step * 1000);
        return runStream(stack.gateway, user.key, speech.pcm, { frameMs: SETTINGS.frame_ms, closeTimeoutMs: SETTINGS.close_timeout_ms });
      }),
    ),
  );
  const after = cpuRead(pids);
  const mem = memory.stop(n);
  const failures = settled.flatMap((s, i) => (s.status === 'rejected' ? [`N=${n}, stream ${i}: ${describe(s.reason)}`] : []));
  const records = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const figures: StreamFigures[] = records.map((r) => streamFigures(r, speech.utterances));

  const wall = (after.at - before.at) / 1000;
  const cpu: Record<string, number> = {};
  let ours = 0;
  for (const [name, s] of Object.entries(after.seconds)) {
    const used = s - (before.seconds[name] ?? s);
    if (name !== 'transcription_node_only') ours += used;
    cpu[name] = r1((used / wall) * 100);
  }
  const other = Math.max(0, r1(((after.busy - before.busy - ours) / wall) * 100));
  const transcriptionCpu = (after.seconds.transcription ?? 0) - (before.seconds.transcription ?? 0);
  const pool = (pick: (f: StreamFigures) => number[]) => distribution(figures.flatMap(pick));
  const latencies = (f: StreamFigures) => f.utterances.flatMap((u) => (u.final_latency_ms === undefined ? [] : [u.final_latency_ms]));
  const finalLatency = pool(latencies);
  const expected = (seconds: number) => Math.max(1, Math.ceil(seconds / 60) * creditsPerMinute);
  const level: LevelResult = {
    streams: n,
    before_start: quiet,
    keeps_real_time: failures.length === 0 && figures.every((f) => f.keeps_real_time),
    final_latency_p50_within_target: failures.length === 0 && finalLatency.n > 0 && finalLatency.p50 <= TARGETS.final_latency_p50_ms_max,
    final_latency_ms: finalLatency,
    final_latency_from_utterance_end_ms: pool((f) => f.utterances.flatMap((u) => (u.final_latency_from_utterance_end_ms === undefined ? [] : [u.final_latency_from_utterance_end_ms]))),
    partial_gap_ms: pool((f) => f.partial_gaps_ms),
    first_partial_ms: pool((f) => f.first_partial_ms),
    lag_ms: pool((f) => f.lag_ms),
    max_lag_growth_ms: Math.max(0, ...figures.map((f) => f.lag_growth_ms)),
    close_to_closed_ms: pool((f) => [f.close_to_closed_ms]),
    missing_finals: figures.reduce((a, f) => a + f.missing_finals, 0),
    stream_errors: records.flatMap((r, i) => (r.error ? [`stream ${i}: ${r.error}`] : [])),
    wer_mean: r3(figures.reduce((a, f) => a + wordErrorRate(reference, f.text).wer, 0) / (figures.length || 1)),
    cpu_percent: cpu,
    transcription_cpu_cores_per_stream: r3(transcriptionCpu / (n * speech.seconds)),
    other_cpu_percent: other,
    noisy: other > NOISE_PERCENT,
    memory: mem,
    max_send_late_ms: r1(Math.max(0, ...records.map((r: StreamRecord) => r.maxSendLateMs))),
    wall_seconds: r1(wall),
    per_stream: figures.map((f, i) => ({
      user: i,
      ended: records[i]!.error === undefined ? 'closed' : `${records[i]!.closeCode} ${records[i]!.closeReason}`,
      keeps_real_time: f.keeps_real_time,
      final_latency_ms: f.utterances.map((u) => u.final_latency_ms ?? null),
      lag_growth_ms: f.lag_growth_ms,
      lag_by_utterance_ms: f.lag_by_utterance_ms,
      partials: f.partials,
      close_to_closed_ms: f.close_to_closed_ms,
      wer: r3(wordErrorRate(reference, f.text).wer),
      seconds_sent: r3(f.seconds_sent),
      duration_seconds: f.duration_seconds,
      credits_charged: f.credits_charged,
      credits_expected: expected(f.seconds_sent),
    })),
  };
  for (const s of level.per_stream) {
    if (s.ended !== 'closed') continue;
    if (Math.abs(s.duration_seconds - s.seconds_sent) > 0.01) failures.push(`N=${n}, stream ${s.user}: closed.duration_seconds ${s.duration_seconds} ≠ ${s.seconds_sent} s sent`);
    if (s.credits_charged !== s.credits_expected) failures.push(`N=${n}, stream ${s.user}: charged ${s.credits_charged} credits for ${s.seconds_sent} s, expected ${s.credits_expected}`);
  }
  return { level, failures };
}

async function runLive(log: (line: string) => void): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const levels = levelsOf(process.env.BENCH_LIVE_LEVELS);
  const utterances = librivoxUtterances();
  const speech = speechStream(utterances, { leadSeconds: SETTINGS.lead_seconds, gapSeconds: SETTINGS.gap_seconds, tailSeconds: SETTINGS.tail_seconds });
  const reference = utterances.map((u) => u.text).join(' ');
  const creditsPerMinute = planById(DEFAULT_PLAN_ID)?.transcriptionCreditsPerMinute ?? 1;
  log(`stream: ${utterances.length} LibriVox utterances, ${speech.seconds.toFixed(1)} s of audio (${speech.utterances.reduce((a, u) => a + u.end - u.start, 0).toFixed(1)} s of speech), ${SETTINGS.frame_ms} ms frames at real-time pace`);

  const failures: string[] = [];
  const results: LevelResult[] = [];
  /** Levels that fell behind while the machine was busy with others, and were run again. */
  const noisyAttempts: LevelResult[] = [];
  const stack = await startStack(log, { services: ['auth', 'billing', 'library', 'transcription'], env: { MURMUR_TRANSCRIPTION_ENGINE: SETTINGS.engine }, logLevel: SETTINGS.log_level });
  const redis = stack.redis;
  let stoppedBecause = 'every level ran';
  try {
    const users: BenchUser[] = [];
    for (let i = 0; i < Math.max(...levels); i += 1) users.push(await createBenchUser(stack, `bench-live-${i}@murmur.test`, { monthlyCredits: SETTINGS.monthly_credits }));
    const sweepStarted = performance.now();
    for (const n of levels) {
      const elapsed = (performance.now() - sweepStarted) / 1000;
      const projected = speech.seconds + Math.min(SETTINGS.stagger_seconds * (n - 1), SETTINGS.max_spread_seconds) + 3;
      if (results.length > 0 && elapsed + projected > SETTINGS.sweep_budget_seconds) {
        stoppedBecause = `N=${n} would end the sweep after ${SETTINGS.sweep_budget_seconds} s (BENCH_LIVE_LEVELS runs chosen levels)`;
        break;
      }
      let { level, failures: f } = await runLevel(stack, users, speech, n, creditsPerMinute, reference);
      for (let retry = 0; retry < SETTINGS.noisy_retries && f.length === 0 && !level.keeps_real_time && level.noisy; retry += 1) {
        log(`N=${n} fell behind while others used ${level.other_cpu_percent}% of a core: once more`);
        noisyAttempts.push(level);
        ({ level, failures: f } = await runLevel(stack, users, speech, n, creditsPerMinute, reference));
      }
      results.push(level);
      failures.push(...f);
      log(
        `N=${String(n).padStart(2)}: ${level.keeps_real_time ? 'keeps real time' : 'FALLS BEHIND   '}  final p50 ${(level.final_latency_ms.p50 / 1000).toFixed(2)} s p90 ${(level.final_latency_ms.p90 / 1000).toFixed(2)} s  ` +
          `partial gap p90 ${(level.partial_gap_ms.p90 / 1000).toFixed(2)} s  lag growth ≤ ${(level.max_lag_growth_ms / 1000).toFixed(2)} s  transcription CPU ${level.cpu_percent.transcription}%  others ${level.other_cpu_percent}%`,
      );
      for (const e of level.stream_errors) log(`N=${n}, ${e}`);
      if (f.length > 0) {
        stoppedBecause = `N=${n} failed`;
        break;
      }
      if (!level.keeps_real_time) {
        stoppedBecause = `N=${n} did not keep real time`;
        break;
      }
    }
    stack.procs.assertAlive();
  } catch (err) {
    failures.push(describe(err));
  } finally {
    await stack.stop();
  }

  const single = results.find((l) => l.streams === 1);
  const maxReal = Math.max(0, ...results.filter((l) => l.keeps_real_time).map((l) => l.streams));
  const maxLatency = Math.max(0, ...results.filter((l) => l.keeps_real_time && l.final_latency_p50_within_target).map((l) => l.streams));
  const targetsMet = {
    final_latency_p50: single !== undefined && single.final_latency_ms.n > 0 && single.final_latency_ms.p50 <= TARGETS.final_latency_p50_ms_max,
    partial_cadence_p90: single !== undefined && single.partial_gap_ms.n > 0 && single.partial_gap_ms.p90 <= TARGETS.partial_gap_p90_ms_max,
    all: false,
  };
  targetsMet.all = targetsMet.final_latency_p50 && targetsMet.partial_cadence_p90;
  const maxOther = Math.max(0, ...results.map((l) => l.other_cpu_percent));
  const credits = results.flatMap((l) => l.per_stream.filter((s) => s.ended === 'closed').map((s) => ({ streams: l.streams, seconds_sent: s.seconds_sent, duration_seconds: s.duration_seconds, credits_charged: s.credits_charged, credits_expected: s.credits_expected })));

  const result = {
    benchmark: 'live',
    ok: failures.length === 0,
    failures,
    timestamp,
    stream: {
      seconds: r3(speech.seconds),
      speech_seconds: r3(speech.utterances.reduce((a, u) => a + u.end - u.start, 0)),
      utterances: speech.utterances.map((u) => ({ id: u.id, start: r3(u.start), end: r3(u.end) })),
      made_of: `${SETTINGS.lead_seconds} s of silence, the ${utterances.length} LibriVox utterances of pocketsphinx-testdata each followed by ${SETTINGS.gap_seconds} s of silence (${SETTINGS.tail_seconds} s after the last); ${SETTINGS.encoding} ${SETTINGS.sample_rate} Hz in ${SETTINGS.frame_ms} ms binary frames, frame k sent k × ${SETTINGS.frame_ms} ms after the first, then {"type":"close"}`,
    },
    definitions: {
      final_latency: "per utterance: arrival of the last final whose words overlap the utterance's place in the stream − the send time of the frame holding the utterance's last sample (the files are cut within 0.2 s of their speech's end); final_latency_from_utterance_end_ms measures from the frame holding the following utterance_end's `at` instead. It includes the detector's wait for silence before it ends an utterance",
      partial_gap: 'arrival gaps speech_started → first partial → next partial …, until the final or utterance_end; the last partial → final gap (the silence the detector waits for) is not counted. The target reads "one every 500 ms" as p90 ≤ 500 ms',
      lag: "per partial: its arrival − the send time of the audio at its `end` (the recognizer's position): how far the recognizer is behind the speaker",
      keeps_real_time: `a stream keeps real time when every utterance got a final, it ended with closed, and its lag grew by at most ${LAG_GROWTH_MAX_MS} ms from its first utterance to its last (median of each utterance's partial lags); a level keeps real time when all its streams do. A recognizer short of CPU falls further behind with every second of audio, which this catches within the 34 s stream`,
      max_streams_latency_target: `the largest level that keeps real time with its pooled final latency p50 ≤ ${TARGETS.final_latency_p50_ms_max} ms`,
    },
    targets: TARGETS,
    targets_met: targetsMet,
    single_stream: single
      ? {
          final_latency_ms: single.final_latency_ms,
          final_latency_from_utterance_end_ms: single.final_latency_from_utterance_end_ms,
          partial_gap_ms: single.partial_gap_ms,
          first_partial_ms: single.first_partial_ms,
          lag_ms: single.lag_ms,
          close_to_closed_ms: single.close_to_closed_ms,
          wer: single.wer_mean,
          transcription_cpu_cores_per_stream: single.transcription_cpu_cores_per_stream,
        }
      : null,
    max_streams_real_time: maxReal,
    max_streams_latency_target: maxLatency,
    sweep_stopped: stoppedBecause,
    levels: results,
    noisy_attempts: noisyAttempts,
    /** The CPU bound: cores ÷ the transcription service's CPU per stream at N=1 (recognizer and relay), before the gateway and billing take their share. */
    projected_max_streams_by_cpu: single && single.transcription_cpu_cores_per_stream > 0 ? Math.floor(machine.cpus / single.transcription_cpu_cores_per_stream) : null,
    credits: {
      credits_per_minute: creditsPerMinute,
      rule: 'every started minute of audio received at the plan price, at least one credit',
      all_match: credits.every((c) => c.credits_charged === c.credits_expected && Math.abs(c.duration_seconds - c.seconds_sent) <= 0.01),
      streams: credits.length,
      seconds_streamed: r3(credits.reduce((a, c) => a + c.seconds_sent, 0)),
      credits_charged: credits.reduce((a, c) => a + c.credits_charged, 0),
    },
    max_other_cpu_percent: maxOther,
    noisy: maxOther > NOISE_PERCENT,
    redis_used: redis,
    caches: redisNote(redis),
    settings: { ...SETTINGS, levels },
    machine,
    notes: [
      `Everything (the bench's clients, five Node processes, one ps-live recognizer per stream, Postgres) shares the machine's ${machine.cpus} core(s). cpu_percent is percent of one core; the transcription service's figure includes its recognizers (counted when each is reaped, at its stream's end), so read it per level, not per second.`,
      'other_cpu_percent is the machine\'s busy time minus our processes: Postgres is counted there (a few queries per stream).',
      'Memory: the recognizers\' PSS (private pages plus their share of the model files all of them map) is what N streams really hold; their RSS counts the shared pages once per process.',
      'A missed target does not fail the run; failures lists what makes it invalid (a refused stream, one that hung after its close, a crashed process, a charge that does not match the audio). A stream the server ended with an error (a level beyond the machine) is that level\'s stream_errors: the level does not keep real time.',
    ],
  };

  const s = (ms: number) => (ms / 1000).toFixed(2);
  const rows = results.map((l) => [
    String(l.streams),
    l.keeps_real_time ? 'yes' : 'NO',
    `${s(l.final_latency_ms.p50)} / ${s(l.final_latency_ms.p90)} / ${s(l.final_latency_ms.max)}`,
    `${s(l.partial_gap_ms.p50)} / ${s(l.partial_gap_ms.p90)} / ${s(l.partial_gap_ms.max)}`,
    s(l.max_lag_growth_ms),
    `${l.cpu_percent.transcription ?? 0}%`,
    `${(l.transcription_cpu_cores_per_stream * 100).toFixed(1)}%`,
    `${l.memory.pss_mb_per_stream}`,
    `${l.other_cpu_percent}%`,
  ]);
  return {
    result,
    failures,
    table: { headers: ['streams', 'real time', 'final p50/p90/max s', 'partial gap p50/p90/max s', 'lag growth s', 'transcr. CPU', 'CPU/stream', 'PSS MB/stream', 'others'], rows },
    notes: [
      `targets (one stream): final latency p50 ≤ ${s(TARGETS.final_latency_p50_ms_max)} s: ${targetsMet.final_latency_p50 ? 'met' : 'MISSED'}; partial gap p90 ≤ ${s(TARGETS.partial_gap_p90_ms_max)} s: ${targetsMet.partial_cadence_p90 ? 'met' : 'MISSED'}`,
      `most streams at real time: ${maxReal} (with final p50 ≤ ${s(TARGETS.final_latency_p50_ms_max)} s: ${maxLatency}); sweep: ${stoppedBecause}`,
      `credits: ${result.credits.credits_charged} charged for ${result.credits.seconds_streamed} s over ${result.credits.streams} streams (${result.credits.all_match ? 'each as expected' : 'MISMATCH'})`,
      ...results.filter((l) => l.stream_errors.length > 0).map((l) => `N=${l.streams}: ${l.stream_errors.length} stream(s) ended by the server with an error (${[...new Set(l.per_stream.filter((p) => p.ended !== 'closed').map((p) => p.ended))].join(', ')}); see stream_errors`),
      ...(result.noisy ? [`NOISY: processes outside the benchmark used up to ${maxOther}% of a core; repeat before trusting the latencies`] : []),
    ],
  };
}

export const liveBench: Benchmark = {
  name: 'live',
  description: 'GET /listen on real speech at real-time pace: final latency, partial cadence, streams at once on this machine (issue 33)',
  run: runLive,
};
