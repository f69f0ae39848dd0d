/**
 * recording-words: what a transcript's words cost to read (issue 32). Two copies of one two-hour
 * transcript (1,667 segments), one stored with its 20,000 timed words and two speakers, one
 * without, through the library's real CreateRecording; then load on `GET /api/v1/recordings/{id}`
 * of each, on the one with words with `?words=true`, and on the list, interleaved in one run
 * through the real topology (gateway → auth → library, separate processes, on Postgres).
 * Reports req/s, p50/p99 and the bytes of each answer. Targets: stored words cost a plain read
 * nothing (p50 within 1.15× the copy without them); reading the words costs at most 5× the plain
 * read (p50), for an answer ~5× its size.
 */
import { timeline } from '@murmur/proto';
import { machineInfo, redactUrl, type Benchmark, type BenchmarkReport } from './benchmark';
import { loadConnections } from './load';
import { interleavedRounds, maxOtherCpu, NOISE_PERCENT, r3, summarize } from './rounds';
import { analyze, BENCH_DATABASE, createBenchUser, startStack } from './stack';

const SETTINGS = {
  connections: loadConnections(),
  pipelining: 1,
  warmup_seconds: 2,
  duration_seconds: 8,
  rounds: 2,
  words: 20_000,
  audio_seconds: 2 * 60 * 60,
  seeded_recordings: 50,
  log_level: 'warn',
};

const TARGETS = { stored_words_p50_ratio_max: 1.15, words_p50_over_plain_p50_max: 5 };

type Target = 'list' | 'recording_without_words' | 'recording' | 'recording_words';
const TARGET_ORDER: Target[] = ['list', 'recording_without_words', 'recording', 'recording_words'];

/** A two-hour meeting: 20,000 words of 3–9 letters, 0.36 s apart, two speakers taking turns. */
function meetingWords(n: number): { words: timeline.Words; text: string; segments: Array<{ startSeconds: number; endSeconds: number; text: string; speaker: string }> } {
  const vocabulary = ['budget', 'quarter', 'launch', 'customer', 'design', 'review', 'team', 'plan', 'the', 'and', 'we', 'will', 'next', 'week', 'numbers', 'market'];
  const words: timeline.Words = { text: [], startMs: [], endMs: [], confidence: [], speaker: [] };
  for (let i = 0; i < n; i++) {
    words.text.push(vocabulary[(i * 7 + (i >> 3)) % vocabulary.length]!);
    words.startMs.push(i * 360);
    words.endMs.push(i * 360 + 300);
    words.confidence.push(0.5 + ((i * 37) % 50) / 100);
    words.speaker.push(Math.floor(i / 240) % 2 === 0 ? 1 : 2);
  }
  const segments = [];
  for (let at = 0; at < n; at += 12) {
    const end = Math.min(n, at + 12);
    segments.push({ startSeconds: words.startMs[at]! / 1000, endSeconds: words.endMs[end - 1]! / 1000, text: words.text.slice(at, end).join(' '), speaker: words.speaker[at] === 1 ? 'S1' : 'S2' });
  }
  return { words, text: words.text.join(' '), segments };
}

async function runRecordingWords(log: (line: string) => void): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const stack = await startStack(log, { services: ['auth', 'billing', 'library'], logLevel: SETTINGS.log_level });
  try {
    const user = await createBenchUser(stack, 'words@murmur.test', { recordings: SETTINGS.seeded_recordings });
    const meeting = meetingWords(SETTINGS.words);
    const store = async (withWords: boolean) => {
      const { recording } = await stack.procs.whileAlive(
        stack.clients.library.createRecording({
          ownerId: user.userId,
          title: 'Two-hour planning meeting',
          folderId: '',
          durationSeconds: SETTINGS.audio_seconds,
          transcript: {
            text: meeting.text,
            language: 'en',
            segments: withWords ? meeting.segments : meeting.segments.map(({ speaker: _s, ...s }) => s),
            timeline: withWords ? { words: meeting.words, speakers: [{ id: 'S1', name: 'Maria' }, { id: 'S2', name: 'Ken' }], wordCount: 0 } : undefined,
          },
          createdAt: new Date(Date.now() - 60_000),
          recordingId: '',
        }),
      );
      if (!recording) throw new Error('CreateRecording answered no recording');
      return recording;
    };
    const recording = await store(true);
    const without = await store(false);
    await analyze(stack.db.url);
    const urls: Record<Target, string> = {
      list: `${stack.gateway}/api/v1/recordings?limit=20`,
      recording_without_words: `${stack.gateway}/api/v1/recordings/${without.id}`,
      recording: `${stack.gateway}/api/v1/recordings/${recording.id}`,
      recording_words: `${stack.gateway}/api/v1/recordings/${recording.id}?words=true`,
    };
    const bytes = {} as Record<Target, number>;
    for (const target of TARGET_ORDER) {
      const res = await fetch(urls[target], { headers: user.headers });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${target} answered ${res.status}: ${body.slice(0, 200)}`);
      bytes[target] = Buffer.byteLength(body);
      if (target === 'recording_words' && (JSON.parse(body) as { transcript: { words: unknown[] } }).transcript.words.length !== SETTINGS.words) {
        throw new Error('the recording did not come back with its words');
      }
    }
    const { runs, failures } = await interleavedRounds({
      targets: TARGET_ORDER.map((name) => ({ name, load: { url: urls[name], headers: user.headers } })),
      settings: SETTINGS,
      procs: stack.procs,
      db: { url: stack.db.url, name: BENCH_DATABASE },
      log,
    });
    stack.procs.assertAlive();
    const s = Object.fromEntries(TARGET_ORDER.map((t) => [t, summarize(runs[t]!)])) as Record<Target, ReturnType<typeof summarize>>;
    const ratio = (a: Target, b: Target) => (s[b].latency_ms.p50 > 0 ? r3(s[a].latency_ms.p50 / s[b].latency_ms.p50) : 0);
    const storedWords = ratio('recording', 'recording_without_words');
    const wordsOverPlain = ratio('recording_words', 'recording');
    const otherCpu = maxOtherCpu(runs);
    const targetsMet = {
      stored_words_p50_ratio: storedWords <= TARGETS.stored_words_p50_ratio_max,
      words_p50_over_plain_p50: wordsOverPlain <= TARGETS.words_p50_over_plain_p50_max,
      all: false,
    };
    targetsMet.all = targetsMet.stored_words_p50_ratio && targetsMet.words_p50_over_plain_p50;
    const result = {
      benchmark: 'recording-words',
      ok: failures.length === 0,
      failures,
      timestamp,
      recording: { words: SETTINGS.words, audio_seconds: SETTINGS.audio_seconds, speakers: 2 },
      ...Object.fromEntries(TARGET_ORDER.map((t) => [t, { url: urls[t].replace(stack.gateway, ''), response_bytes: bytes[t], ...s[t] }])),
      stored_words_p50_ratio: storedWords,
      words_p50_over_plain_p50: wordsOverPlain,
      bytes_per_word_json: r3((bytes.recording_words - bytes.recording) / SETTINGS.words),
      max_other_cpu_percent: otherCpu,
      noisy: otherCpu > NOISE_PERCENT,
      targets: TARGETS,
      targets_met: targetsMet,
      settings: SETTINGS,
      machine,
      postgres: { server_version: stack.db.serverVersion, url: redactUrl(stack.db.url) },
      notes: [
        'The words are stored as the bytes of murmur.timeline.v1.Words (columns) and read only with ?words=true; the list and the plain read never select them.',
        `Load generator, gateway, auth, library and Postgres share the machine's ${machine.cpus} core(s).`,
      ],
    };
    const fmt = (x: number, d = 2) => x.toFixed(d);
    return {
      result,
      failures,
      table: {
        headers: ['target', 'bytes', 'req/s', 'p50 ms', 'p99 ms'],
        rows: TARGET_ORDER.map((t) => [t, String(bytes[t]), fmt(s[t].requests_per_second, 0), fmt(s[t].latency_ms.p50), fmt(s[t].latency_ms.p99)]),
      },
      notes: [
        `plain read with words stored ÷ without, p50 = ${fmt(storedWords, 3)} (target ≤ ${TARGETS.stored_words_p50_ratio_max}: ${targetsMet.stored_words_p50_ratio ? 'met' : 'MISSED'})`,
        `?words=true ÷ plain read, p50 = ${fmt(wordsOverPlain, 3)} (target ≤ ${TARGETS.words_p50_over_plain_p50_max}: ${targetsMet.words_p50_over_plain_p50 ? 'met' : 'MISSED'}); ${fmt((bytes.recording_words - bytes.recording) / SETTINGS.words, 1)} bytes of JSON a word`,
        ...(otherCpu > NOISE_PERCENT ? [`NOISY: other processes used up to ${otherCpu.toFixed(0)}% of a core; repeat before trusting the numbers`] : []),
      ],
    };
  } finally {
    await stack.stop();
  }
}

export const recordingWordsBench: Benchmark = {
  name: 'recording-words',
  description: 'GET /api/v1/recordings/{id} of a 2-hour recording (20,000 words) without and with ?words=true, beside the list',
  run: runRecordingWords,
};
