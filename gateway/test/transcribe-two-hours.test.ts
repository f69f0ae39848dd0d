/**
 * A two-hour recording through POST /api/v1/transcribe: gateway → transcription service
 * (ffmpeg, silence cutting, pocketsphinx) → billing, as a developer would send it. Five
 * LibriVox utterances sit at known places across two hours of silence — one just before the
 * one-hour mark, one in the last minute — in a FLAC file (1.9 MB). The whole 2 h is decoded,
 * cut and charged (120 credits); only the audible pieces reach the engine. Every utterance's
 * words must come back at its own place on the timeline.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { librivoxUtterances, placeUtterances, probeSeconds, tempDir, wordsAtTheirPlaces } from '../../services/transcription/src/speech-fixtures';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

jest.setTimeout(240_000);

const TOTAL_SECONDS = 2 * 60 * 60;
/** Where each utterance starts: 26 s in, across 30 min, 3 s before 1 h, 1.5 h, the last minute. */
const OFFSETS = [26, 1795, 3597, 5400, 7170];

let sys: TestSystem;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let file: string;
/** The synchronous answer, which the job must reproduce. */
let syncText = '';

beforeAll(async () => {
  [sys, tmp] = await Promise.all([startSystem({ ai: true }), tempDir('murmur-two-hours-')]);
  file = path.join(tmp.dir, 'two-hours.flac');
  await placeUtterances(librivoxUtterances(), OFFSETS, file, { totalSeconds: TOTAL_SECONDS, background: 'anullsrc=r=16000:cl=mono', codec: ['-c:a', 'flac'] });
});
afterAll(async () => {
  await sys?.stop();
  await tmp?.remove();
});

it('transcribes a 2-hour FLAC with every utterance at its place and charges 120 credits', async () => {
  const utterances = librivoxUtterances();
  expect(Math.abs((await probeSeconds(file)) - TOTAL_SECONDS)).toBeLessThan(0.2);

  const { user, key } = await sys.newUser('t-two-hours@example.com');
  await sys.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 500, prepaidCredits: 0, note: 'two-hour test' });
  const form = new FormData();
  form.append('language', 'en');
  form.append('audio', new Blob([await readFile(file)], { type: 'audio/flac' }), 'two-hours.flac');
  const res = await fetch(`${sys.baseUrl}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as Json;
  expect(res.status).toBe(200);
  expect(body).toMatchObject({ object: 'transcription', credits_charged: 120, language: 'en' });
  expect(Math.abs(body.duration_seconds - TOTAL_SECONDS)).toBeLessThan(0.2);

  const segments = body.segments as Array<{ start: number; end: number; text: string }>;
  let last = 0;
  for (const s of segments) {
    expect(s.start).toBeGreaterThanOrEqual(last);
    expect(s.end).toBeGreaterThanOrEqual(s.start);
    last = s.end;
  }
  expect(wordErrorRate(utterances.map((u) => u.text).join(' '), body.text).wer).toBeLessThanOrEqual(0.45);
  // Each utterance's words lie in its own window (±0.5 s), nothing anywhere else.
  const placed = await wordsAtTheirPlaces(segments, utterances, OFFSETS);
  for (const u of placed.utterances) expect(u.found).toBeGreaterThanOrEqual(u.referenceWords / 2);
  expect(placed.outside).toEqual([]);

  const usage = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
  expect(usage.counters.transcriptions).toBe(1);
  expect(usage.credits.monthly_remaining).toBe(380);
  syncText = body.text as string;
});

/**
 * The same file through POST /transcriptions: queued in well under the upload's own time (the
 * duration comes from the FLAC header, nothing is decoded before the answer), then the same
 * transcript and the same 120 credits — on the embedded PGlite of `npm start` (the jobs' queue
 * on real Postgres runs in the other job tests, whose audio is shorter: one more two-hour pass
 * here would add ~45 s to CI and prove nothing those do not).
 */
it('as a job on embedded PGlite, queues the 2-hour file at once and completes it with the synchronous transcript, charged 120 credits once', async () => {
  const system = (embedded ??= await startSystem({ ai: true, databaseUrl: '' }));
  const { user, key } = await system.newUser('t-two-hours-job@example.com');
  await system.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 500, prepaidCredits: 0, note: 'two-hour job test' });
  const form = new FormData();
  form.append('language', 'en');
  form.append('audio', new Blob([await readFile(file)], { type: 'audio/flac' }), 'two-hours.flac');
  const res = await fetch(`${system.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const queued = (await res.json()) as Json;
  expect(res.status).toBe(202);
  expect(queued).toMatchObject({ status: 'queued', credits_reserved: 120 });
  expect(Math.abs(queued.duration_seconds - TOTAL_SECONDS)).toBeLessThan(0.2);
  let job: Json = queued;
  while (!['completed', 'failed', 'canceled'].includes(job.status)) {
    await new Promise((r) => setTimeout(r, 500));
    job = (await get(system.baseUrl, `/api/v1/transcriptions/${queued.id}`, key)).body as Json;
  }
  expect(job).toMatchObject({ status: 'completed', credits_charged: 120, progress: 1, error: null });
  expect(job.text).toBe(syncText);
  const usage = (await get(system.baseUrl, '/api/v1/usage', key)).body as Json;
  expect(usage.credits).toMatchObject({ monthly_remaining: 380, reserved: 0 });
  expect(usage.counters.transcriptions).toBe(1);
});

let embedded: TestSystem | undefined;
afterAll(async () => {
  await embedded?.stop();
});
