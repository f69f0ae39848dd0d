/**
 * Transcribe over gRPC, end to end: a real transcription server with the real billing service
 * (real Postgres when DATABASE_URL is set), ffmpeg decoding and pocketsphinx on human speech
 * (pocketsphinx-testdata's LibriVox recordings) in every common format — the M4A with its moov
 * index after the audio, as ffmpeg writes it by default; fake engines only where a failure
 * has to be provoked.
 */
import { MAX_AUDIO_BYTES } from '@murmur/contract';
import { seededRandom } from '@murmur/kit';
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { transcription } from '@murmur/proto';
import { EngineError, type Recognition, type RecognizeOptions, type SpeechEngine } from '../src/engines/engine';
import { createPocketsphinxEngine } from '../src/engines/pocketsphinx';
import { wavHeader } from '../src/pcm';
import { audioLimitOf } from '../src/service';
import { wordErrorRate } from '../src/wer';
import { ffmpeg, LIBRIVOX_DIR, probeSeconds, synthPcm, tempDir } from './fixtures';
import {
  assertMonotonic,
  config,
  failure,
  leftovers,
  newUser,
  openTranscribe,
  transcribeAs,
  startStack,
  transcribeBuffer,
  transcribeFile,
  usageOf,
  type Stack,
} from './harness';

const pocketsphinx = createPocketsphinxEngine();
type Behaviour = (wav: string, opts: RecognizeOptions) => Promise<Recognition>;
/** What the engine does in the current test: pocketsphinx unless a test provokes a failure. */
let behaviour: Behaviour = (wav, opts) => pocketsphinx.recognize(wav, opts);
const engine: SpeechEngine = {
  name: 'pocketsphinx',
  model: 'en-us',
  supportsLanguage: (l) => pocketsphinx.supportsLanguage!(l),
  recognize: (wav, opts) => behaviour(wav, opts),
};

/** Two LibriVox utterances (pocketsphinx-testdata) joined: 9.3 s of human speech. */
const SPEECH = 'he was not an ill disposed young man had he married a more a amiable woman he might have been made still more respectable than he was';
let stack: Stack;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let speechWav: string;

beforeAll(async () => {
  [stack, tmp] = await Promise.all([startStack({ engine, concurrency: 2 }), tempDir('murmur-trn-audio-')]);
  speechWav = path.join(tmp.dir, 'speech.wav');
  const [a, b] = ['0880', '0920'].map((n) => path.join(LIBRIVOX_DIR, `sense_and_sensibility_01_austen_64kb-${n}.wav`));
  await ffmpeg(['-i', a!, '-i', b!, '-filter_complex', '[0][1]concat=n=2:v=0:a=1', speechWav]);
});
afterAll(async () => {
  await stack?.stop();
  await tmp?.remove();
});
afterEach(async () => {
  behaviour = (wav, opts) => pocketsphinx.recognize(wav, opts);
  // Every call removes its temp folder, whatever happened.
  for (let i = 0; i < 100 && (await leftovers(stack.tmpDir)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect(await leftovers(stack.tmpDir)).toEqual([]);
});

/** Waits until the one running call has stored `bytes` of upload in its temp folder. */
async function uploadStored(bytes: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    for (const dir of await leftovers(stack.tmpDir)) {
      const size = await stat(path.join(stack.tmpDir, dir, 'upload')).then((s) => s.size, () => 0);
      if (size >= bytes) return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the upload never reached the server');
}

/** A synthetic file of `seconds` (tone with a pause every 10 s) as WAV bytes. */
function synthWav(seconds: number): Buffer {
  const parts: Array<['tone' | 'silence', number]> = [];
  for (let t = 0; t < seconds; t += 10) parts.push(['tone', Math.min(9.5, seconds - t)], ['silence', Math.min(0.5, Math.max(0, seconds - t - 9.5))]);
  const pcm = synthPcm(parts.filter(([, s]) => s > 0));
  return Buffer.concat([wavHeader(pcm.length), pcm]);
}

describe('Transcribe with pocketsphinx', () => {
  it('transcribes WAV, MP3, OGG, FLAC, M4A (index at the end) and WebM alike, and charges each by duration', async () => {
    const formats: Array<[string, string[]]> = [
      ['wav', []],
      ['mp3', ['-c:a', 'libmp3lame', '-b:a', '64k']],
      ['ogg', ['-c:a', 'libvorbis']],
      ['flac', ['-c:a', 'flac']],
      ['m4a', ['-c:a', 'aac', '-movflags', '-faststart']],
      ['webm', ['-c:a', 'libopus']],
    ];
    const files = await Promise.all(
      formats.map(async ([ext, args]) => {
        if (ext === 'wav') return speechWav;
        const out = path.join(tmp.dir, `speech.${ext}`);
        await ffmpeg(['-i', speechWav, ...args, out]);
        return out;
      }),
    );
    const seconds = await probeSeconds(speechWav);
    const users = formats.map(() => newUser());
    const results = await Promise.all(files.map((file, i) => transcribeFile(stack.client, file, config(users[i]!, { filename: path.basename(file) }))));
    const reference = results[0]!;
    for (const [i, r] of results.entries()) {
      const ext = formats[i]![0];
      expect({ ext, id: /^trn_[0-9a-v]+$/.test(r.id), model: r.model, language: r.language }).toEqual({ ext, id: true, model: 'pocketsphinx/en-us', language: 'en' });
      expect(Math.abs(r.durationSeconds - seconds)).toBeLessThan(0.1);
      // Measured: WER 0.22 on every format (31 words); 0.35 leaves room, a wrong decode scores ~1.
      expect(wordErrorRate(SPEECH, r.text).wer).toBeLessThanOrEqual(0.35);
      // Lossy codecs may change a word or two of what the WAV gives, no more.
      expect(wordErrorRate(reference.text, r.text).wer).toBeLessThanOrEqual(0.15);
      expect(r.segments.length).toBeGreaterThan(0);
      assertMonotonic(r.segments);
      expect(r.segments[r.segments.length - 1]!.endSeconds).toBeLessThanOrEqual(r.durationSeconds);
      expect(r.creditsCharged).toBe(1);
    }
    const usage = await usageOf(stack.billing, users[0]!);
    expect(usage).toMatchObject({ creditsUsed: 1, creditsReserved: 0, transcriptions: 1, transcriptionSeconds: Math.ceil(reference.durationSeconds) });
    expect(usage.monthlyCreditsRemaining).toBe(usage.plan!.monthlyCredits - 1);
  });

  it('charges a repeated idempotency key once and never recognises it again (the repeat is idempotency_conflict)', async () => {
    let recognitions = 0;
    behaviour = async () => {
      recognitions += 1;
      return { text: 'hello', segments: [{ start: 0, end: 1, text: 'hello' }] };
    };
    const user = newUser();
    const cfg = config(user, { idempotencyKey: 'idem-repeat-1' });
    const wav = synthWav(61);
    const first = await transcribeBuffer(stack.client, wav, cfg);
    expect(first.creditsCharged).toBe(2);
    const seen = recognitions;
    const again = await failure(transcribeBuffer(stack.client, wav, cfg));
    expect(again).toMatchObject({ code: 'idempotency_conflict', param: 'idempotency_key', message: expect.stringMatching(/completed and was charged/) });
    // The same key with other audio (a completed job's id, another file): refused before anything is held.
    const other = await failure(transcribeBuffer(stack.client, synthWav(120), cfg));
    expect(other).toMatchObject({ code: 'idempotency_conflict', message: expect.stringMatching(/other parameters/) });
    expect(recognitions).toBe(seen);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 2, transcriptions: 1, creditsReserved: 0 });
  });

  it('saves the transcript itself with save: true (one owner), before charging, under an id derived from the transcription', async () => {
    behaviour = async () => ({ text: 'hello world', segments: [{ start: 0, end: 1, text: 'hello world' }] });
    const user = newUser();
    const r = await transcribeBuffer(stack.client, synthWav(5), config(user, { save: true, title: 'Stand-up' }));
    expect(r.recordingId).toBe(`rec_${r.id.slice(4)}`);
    const { recording } = await stack.library.getRecording({ ownerId: user, recordingId: r.recordingId });
    expect(recording).toMatchObject({ title: 'Stand-up', transcript: { text: 'hello world' } });
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 1, creditsReserved: 0 });
    // Without save, nothing is stored.
    expect((await transcribeBuffer(stack.client, synthWav(5), config(user))).recordingId).toBe('');
    expect((await stack.library.getLibraryStats({ ownerId: user })).recordings).toBe(1);
  });

  it('applies saving options that follow the audio (late_options), checked before anything is held', async () => {
    behaviour = async () => ({ text: 'hello', segments: [{ start: 0, end: 1, text: 'hello' }] });
    const user = newUser();
    const send = async (late: transcription.TranscribeLateOptions) => {
      const call = openTranscribe(stack.client, config(user));
      call.response.catch(() => undefined);
      await call.write(synthWav(3));
      call.stream.write({ payload: { $case: 'lateOptions', value: late } });
      call.stream.end();
      return call.response;
    };
    const saved = await send({ save: true, title: 'Late title', folderId: '', timeline: undefined });
    expect((await stack.library.getRecording({ ownerId: user, recordingId: saved.recordingId })).recording?.title).toBe('Late title');
    const before = await usageOf(stack.billing, user);
    expect(await failure(send({ save: false, title: 'Without save', folderId: '', timeline: undefined }))).toMatchObject({ code: 'invalid_request', param: 'title' });
    expect(await failure(send({ save: true, title: '', folderId: 'fld_notmine0000000000000000', timeline: undefined }))).toMatchObject({ code: 'not_found', param: 'folder_id' });
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: before.creditsUsed, creditsReserved: 0 });
  });

  it('takes the saved recording back when the charge cannot be committed: nothing charged, nothing kept', async () => {
    behaviour = async () => ({ text: 'hello', segments: [{ start: 0, end: 1, text: 'hello' }] });
    const user = newUser();
    stack.failNextCommit();
    const err = await failure(transcribeBuffer(stack.client, synthWav(5), config(user, { save: true })));
    expect(err.code).toBe('service_unavailable');
    expect((await stack.library.getLibraryStats({ ownerId: user })).recordings).toBe(0);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 0, creditsReserved: 0 });
  });

  it('holds one minute before decoding and extends the hold as the audio decodes: charged by the decoded length', async () => {
    behaviour = async () => ({ text: 'hello', segments: [{ start: 0, end: 1, text: 'hello' }] });
    const user = newUser();
    const r = await transcribeBuffer(stack.client, synthWav(185), config(user));
    expect(r.creditsCharged).toBe(4);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 4, creditsReserved: 0, transcriptionSeconds: 185 });
    const ledger = (await stack.billing.listLedgerEntries({ userId: user, pageSize: 20, pageToken: '' })).entries.map((e) => e.kind).reverse().filter((k) => k !== 'reset');
    expect(ledger[0]).toBe('reserve');
    expect(ledger.filter((k) => k === 'reserve')).toHaveLength(1);
    expect(ledger.filter((k) => k === 'extend').length).toBeGreaterThan(0);
    expect(ledger[ledger.length - 1]).toBe('commit');
  });

  it('stops decoding at what the caller can pay for: 12 hours of silence with 1 credit is insufficient_tokens after a minute, not a 1.4 GB decode', async () => {
    let recognitions = 0;
    behaviour = async () => {
      recognitions += 1;
      return { text: '', segments: [] };
    };
    const user = newUser();
    await stack.billing.adjustCredits({ userId: user, monthlyCredits: 1, note: 'one credit' });
    // Past the 12-hour limit: decoded to the end, it would be audio_too_large after decoding 1.4 GB.
    const flac = path.join(tmp.dir, 'silence-12h.flac');
    await ffmpeg(['-f', 'lavfi', '-i', 'anullsrc=r=1000:cl=mono', '-t', String(12 * 3600 + 100), '-c:a', 'flac', flac]);
    const err = await failure(transcribeFile(stack.client, flac, config(user, { filename: 'silence.flac' })));
    expect(err).toMatchObject({ code: 'insufficient_tokens', param: 'audio', message: expect.stringMatching(/decoding stopped after 1 minute/) });
    expect(recognitions).toBe(0);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 0, creditsReserved: 0, monthlyCreditsRemaining: 1 });
  });

  it('reports its engines', async () => {
    const res = await stack.client.listEngines({});
    // This test's engine says nothing of its abilities: none beyond text (engines/engine.ts capabilitiesOf).
    expect(res).toEqual({
      active: 'pocketsphinx',
      engines: [{ name: 'pocketsphinx', model: 'en-us', available: true, detail: '', capabilities: { words: false, languageDetection: false, keyterms: 'prompt' } }],
    });
  });
});

describe('Transcribe errors', () => {
  it('never lets a direct caller raise the 500 MB limit with max_bytes; a smaller one is kept', () => {
    expect(audioLimitOf({ maxBytes: 600_000_000 })).toBe(MAX_AUDIO_BYTES);
    expect(audioLimitOf({ maxBytes: Number.MAX_SAFE_INTEGER })).toBe(MAX_AUDIO_BYTES);
    expect(audioLimitOf({ maxBytes: 0 })).toBe(MAX_AUDIO_BYTES);
    expect(audioLimitOf({ maxBytes: 100_000 })).toBe(100_000);
  });

  it('answers missing_audio when the stream holds only the config', async () => {
    const user = newUser();
    const call = openTranscribe(stack.client, config(user));
    call.stream.end();
    const err = await failure(call.response);
    expect([err.code, err.param]).toEqual(['missing_audio', 'audio']);
  });

  it('answers invalid_request when the first message is not the config', async () => {
    const call = transcribeAs(stack.client, newUser());
    call.stream.write({ payload: { $case: 'audioChunk', value: Buffer.from('RIFF') } });
    call.stream.end();
    const err = await failure(call.response);
    expect([err.code, err.param]).toEqual(['invalid_request', 'config']);
  });

  it.each<[string, Partial<transcription.TranscribeConfig>, string]>([
    ['a language pocketsphinx cannot recognise', { language: 'de' }, 'language'],
    ['a malformed language', { language: 'english please' }, 'language'],
    ['a negative max_bytes', { maxBytes: -1 }, 'max_bytes'],
  ])('answers invalid_request for %s before reading audio', async (_name, overrides, param) => {
    const err = await failure(transcribeFile(stack.client, speechWav, config(newUser(), overrides)));
    expect([err.code, err.param]).toEqual(['invalid_request', param]);
  });

  it("takes a config without a user id as the caller's own: transcribed and charged to them", async () => {
    const user = newUser();
    const res = await transcribeFile(stack.client, speechWav, config(user, { userId: '' }), user);
    expect(res.creditsCharged).toBeGreaterThan(0);
    expect((await usageOf(stack.billing, user)).monthlyCreditsRemaining).toBeLessThan((await usageOf(stack.billing, newUser())).monthlyCreditsRemaining);
  });

  it('answers audio_too_large while the upload streams, before it ends, and charges nothing', async () => {
    const user = newUser();
    const call = openTranscribe(stack.client, config(user, { maxBytes: 100_000 }));
    let settled = false;
    call.response.then(
      () => (settled = true),
      () => (settled = true),
    );
    let sent = 0;
    // Keep sending 64 KiB messages (never ending the stream) until the server answers.
    const answered = call.response.catch(() => undefined);
    while (!settled && sent < 16 * 1024 * 1024) {
      // Once the server has answered the stream takes no more; do not wait for it to drain.
      await Promise.race([call.write(Buffer.alloc(64 * 1024, 1)), answered]);
      sent += 64 * 1024;
      await new Promise((r) => setImmediate(r));
    }
    const err = await failure(call.response);
    expect(err.code).toBe('audio_too_large');
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    call.stream.cancel();
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsReserved: 0, creditsUsed: 0 });
  });

  it('answers audio_too_large for audio longer than the duration limit, while decoding, and charges nothing', async () => {
    // The stack allows 600 s; 11 minutes of silent MP3 is tiny on the wire but long.
    const user = newUser();
    const mp3 = path.join(tmp.dir, 'eleven-minutes.mp3');
    await ffmpeg(['-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '660', '-c:a', 'libmp3lame', '-b:a', '8k', mp3]);
    const err = await failure(transcribeFile(stack.client, mp3, config(user)));
    expect([err.code, err.message]).toEqual(['audio_too_large', 'The audio is longer than 10 minutes. Split it into shorter files.']);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsReserved: 0, creditsUsed: 0 });
  });

  it('answers unsupported_audio for bytes that are no audio, and charges nothing', async () => {
    const user = newUser();
    const random = seededRandom(1);
    const noise = Buffer.alloc(200_000);
    for (let i = 0; i < noise.length; i++) noise[i] = Math.floor(random() * 256);
    const err = await failure(transcribeBuffer(stack.client, noise, config(user, { filename: 'voice.mp3' })));
    expect([err.code, err.param]).toEqual(['unsupported_audio', 'audio']);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsReserved: 0, creditsUsed: 0 });
  });

  it('answers unsupported_audio for a playlist that points elsewhere (only plain media demuxers are allowed)', async () => {
    const playlist = Buffer.from(`#EXTM3U\n#EXTINF:10,\nfile://${speechWav}\n`);
    const err = await failure(transcribeBuffer(stack.client, playlist, config(newUser(), { filename: 'list.m3u8' })));
    expect(err.code).toBe('unsupported_audio');
  });

  it('answers transcription_failed when the engine fails, and returns the credits', async () => {
    behaviour = async () => {
      throw new EngineError('pocketsphinx_continuous exited with code 1');
    };
    const user = newUser();
    const released = stack.nextRelease();
    const err = await failure(transcribeBuffer(stack.client, synthWav(5), config(user)));
    expect(err.code).toBe('transcription_failed');
    expect((await released).reason).toBe('engine_failed');
    const usage = await usageOf(stack.billing, user);
    expect(usage).toMatchObject({ creditsReserved: 0, creditsUsed: 0, transcriptions: 0 });
    expect(usage.monthlyCreditsRemaining).toBe(usage.plan!.monthlyCredits);
    const { entries } = await stack.billing.listLedgerEntries({ userId: user, pageSize: 10, pageToken: '' });
    expect(entries.map((e) => e.kind)).toEqual(expect.arrayContaining(['reserve', 'release']));
  });

  it('frees the key of a call that failed: the retry runs again and is charged only for what it delivers', async () => {
    let calls = 0;
    behaviour = async () => {
      calls++;
      if (calls === 1) throw new EngineError('boom');
      return { text: 'hello', segments: [{ start: 0, end: 1, text: 'hello' }] };
    };
    const user = newUser();
    const cfg = config(user, { idempotencyKey: 'idem-failed-once' });
    expect((await failure(transcribeBuffer(stack.client, synthWav(3), cfg))).code).toBe('transcription_failed');
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 0, creditsReserved: 0 });
    const again = await transcribeBuffer(stack.client, synthWav(3), cfg);
    expect([again.creditsCharged, calls]).toEqual([1, 2]);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 1, creditsReserved: 0, transcriptions: 1 });
  });

  it('holds nothing for bytes ffmpeg cannot decode: unsupported_audio with no reservation at all', async () => {
    const user = newUser();
    const err = await failure(transcribeBuffer(stack.client, Buffer.from('this is not audio at all, just text'), config(user)));
    expect(err.code).toBe('unsupported_audio');
    const ledger = (await stack.billing.listLedgerEntries({ userId: user, pageSize: 20, pageToken: '' })).entries.map((e) => e.kind).filter((k) => k !== 'reset');
    expect(ledger).toEqual([]);
  });

  it('stops the other chunks when one chunk fails', async () => {
    const aborted: number[] = [];
    let calls = 0;
    behaviour = async (_wav, { signal }) => {
      const n = calls++;
      if (n === 1) throw new EngineError('chunk failed');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted.push(n);
      throw new Error('aborted');
    };
    const err = await failure(transcribeBuffer(stack.client, synthWav(95), config(newUser())));
    expect(err.code).toBe('transcription_failed');
    expect(aborted).toEqual([0]);
    expect(calls).toBe(2); // the chunks after the failure never started
  });

  it('kills the work and releases the reservation when the client cancels', async () => {
    let engineSignal: AbortSignal | undefined;
    let started!: () => void;
    const engineStarted = new Promise<void>((r) => (started = r));
    behaviour = (_wav, { signal }) =>
      new Promise((_resolve, reject) => {
        engineSignal = signal;
        started();
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const user = newUser();
    const released = stack.nextRelease();
    const call = openTranscribe(stack.client, config(user));
    call.response.catch(() => undefined);
    await call.write(synthWav(3));
    call.stream.end();
    await engineStarted;
    expect((await usageOf(stack.billing, user)).creditsReserved).toBe(1);
    call.stream.cancel();
    expect((await released).reason).toBe('cancelled');
    expect(engineSignal?.aborted).toBe(true);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsReserved: 0, creditsUsed: 0 });
  });

  it('stops reading and reserves nothing when the client cancels during the upload', async () => {
    const user = newUser();
    const call = openTranscribe(stack.client, config(user));
    call.response.catch(() => undefined);
    await call.write(Buffer.alloc(64 * 1024));
    // Cancel once the server holds the bytes: a grpc-js client that cancels in the same tick
    // as its last write may never send the cancel (the idle limit covers that case).
    await uploadStored(64 * 1024);
    call.stream.cancel();
    await failure(call.response);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsReserved: 0, creditsUsed: 0 });
  });

  it('passes billing’s refusal through and recognises nothing', async () => {
    let recognised = false;
    behaviour = async () => {
      recognised = true;
      return { text: '', segments: [] };
    };
    const user = newUser();
    await stack.billing.adjustCredits({ userId: user, monthlyCredits: 0, prepaidCredits: 0, note: 'test: empty' });
    const err = await failure(transcribeBuffer(stack.client, synthWav(5), config(user)));
    expect(err.code).toBe('insufficient_tokens');
    expect(recognised).toBe(false);
  });
});

describe('Transcribe timing', () => {
  it('keeps segments of a multi-chunk file in order with absolute times', async () => {
    // 95 s → four chunks; each chunk's fake words sit at 1–2 s of the chunk.
    behaviour = async (wav) => ({ text: path.basename(wav), segments: [{ start: 1, end: 2, text: path.basename(wav) }] });
    const r = await transcribeBuffer(stack.client, synthWav(95), config(newUser()));
    expect(r.durationSeconds).toBeCloseTo(95, 2);
    expect(r.text).toBe('chunk-0.wav chunk-1.wav chunk-2.wav chunk-3.wav');
    expect(r.segments.map((s) => s.text)).toEqual(['chunk-0.wav', 'chunk-1.wav', 'chunk-2.wav', 'chunk-3.wav']);
    assertMonotonic(r.segments);
    // Cuts fall in the pauses at 29.5–30 s, 59.5–60 s, 89.5–90 s.
    const starts = r.segments.map((s) => s.startSeconds - 1);
    expect(starts[0]).toBeCloseTo(0, 3);
    for (const [i, start] of starts.slice(1).entries()) {
      expect(start).toBeGreaterThanOrEqual(30 * (i + 1) - 0.5);
      expect(start).toBeLessThanOrEqual(30 * (i + 1));
    }
    expect(r.creditsCharged).toBe(2);
  });

  it('sends only audible pieces to the engine, at their place on the timeline', async () => {
    const seen: number[] = [];
    behaviour = async (wav) => {
      seen.push((await stat(wav)).size);
      return { text: 'beep', segments: [{ start: 5, end: 6, text: 'beep' }] };
    };
    // 65 s of digital silence, a 20 s tone, 70 s of silence: only the piece at 60–90 s is heard.
    const pcm = synthPcm([['silence', 65], ['tone', 20], ['silence', 70]]);
    const r = await transcribeBuffer(stack.client, Buffer.concat([wavHeader(pcm.length), pcm]), config(newUser()));
    expect(r.durationSeconds).toBeCloseTo(155, 2);
    expect(seen).toEqual([44 + 30 * 32_000]);
    expect(r.segments).toEqual([{ startSeconds: 65, endSeconds: 66, text: 'beep' }]);
    expect(r.creditsCharged).toBe(3);
  });

  it('charges a silent file by its duration and answers an empty transcript without running the engine', async () => {
    let recognised = false;
    behaviour = async () => {
      recognised = true;
      return { text: 'invented', segments: [] };
    };
    const pcm = synthPcm([['silence', 70]]);
    const user = newUser();
    const r = await transcribeBuffer(stack.client, Buffer.concat([wavHeader(pcm.length), pcm]), config(user));
    expect(recognised).toBe(false);
    expect(r).toMatchObject({ text: '', segments: [], creditsCharged: 2 });
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 2, creditsReserved: 0, transcriptions: 1 });
  });
});
