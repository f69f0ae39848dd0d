/**
 * The live recognizer (native/ps-live.c through src/live/live-recognizer.ts) on real speech:
 * LibriVox recordings of pocketsphinx-testdata fed as a live stream would feed them, as fast as
 * the pipe takes the audio. The helper is (re)built first by scripts/build-native.js, as npm test
 * does, so the C source under test is the one in the tree.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { EngineError } from '../src/engines/engine';
import { checkLiveBinary, LIVE_BINARY, startLiveRecognizer, type LiveEvent, type LiveRecognizer } from '../src/live/live-recognizer';
import { BYTES_PER_SECOND, WAV_HEADER_BYTES } from '../src/pcm';
import { wordErrorRate } from '../src/wer';
import { librivoxUtterances, tempDir } from './fixtures';
import { feed, recorder } from './live-support';

const REPO = path.resolve(__dirname, '..', '..', '..');
const utterances = new Map(librivoxUtterances().map((u) => [u.id.slice(-4), u]));
/** The PCM of a LibriVox utterance (16 kHz mono s16le WAV with the canonical 44-byte header). */
const pcmOf = (id: string) => readFileSync(utterances.get(id)!.wav).subarray(WAV_HEADER_BYTES);
const textOf = (id: string) => utterances.get(id)!.text;
const seconds = (pcm: Buffer) => pcm.length / BYTES_PER_SECOND;


const finals = (events: LiveEvent[]) => events.filter((e): e is Extract<LiveEvent, { type: 'final' }> => e.type === 'final');
const finalText = (events: LiveEvent[]) => finals(events).flatMap((f) => f.words.map((w) => w.text)).join(' ');

/** This process's children running ps-live (from /proc: "pid (comm) state ppid …"). */
function liveChildren(): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm === 'ps-live') pids.push(Number(pid));
    } catch {
      // the process ended while we read
    }
  }
  return pids;
}

beforeAll(() => {
  execFileSync(process.execPath, [path.join(REPO, 'scripts/build-native.js')], { stdio: ['ignore', 'ignore', 'inherit'] });
});
afterEach(() => expect(liveChildren()).toEqual([]));

describe('live recognizer', () => {
  it('reports speech_started, partials, a final close to the reference and utterance_end, in order, within the audio', async () => {
    const pcm = pcmOf('0920');
    const r = recorder();
    const rec = await startLiveRecognizer({ onEvent: r.onEvent });
    await feed(rec, pcm);
    await rec.end();
    const types = r.events.map((e) => e.type);
    // One utterance: speech_started, partials, then final(s) and utterance_end (the detector may split it at a pause).
    expect(types[0]).toBe('speech_started');
    expect(types[1]).toBe('partial');
    expect(types[types.length - 1]).toBe('utterance_end');
    expect(types.filter((t) => t === 'speech_started').length).toBe(types.filter((t) => t === 'utterance_end').length);
    for (let i = 1; i < types.length; i++) {
      if (types[i] === 'utterance_end') expect(types[i - 1]).toBe('final');
      if (types[i] === 'final') expect(['partial', 'speech_started']).toContain(types[i - 1]);
    }
    expect(wordErrorRate(textOf('0920'), finalText(r.events)).wer).toBeLessThan(0.5);
    const times = r.events.flatMap((e) => ('at' in e ? [e.at] : [e.start, e.end, ...(e.type === 'final' ? e.words.flatMap((w) => [w.start, w.end]) : [])]));
    for (const t of times) {
      expect(t).toBeGreaterThanOrEqual(0);
      expect(t).toBeLessThanOrEqual(seconds(pcm));
    }
    for (const w of finals(r.events).flatMap((f) => f.words)) {
      expect(w.start).toBeLessThanOrEqual(w.end);
      expect(w.confidence).toBeGreaterThanOrEqual(0);
      expect(w.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('gives two utterances 3 s apart two finals at their own times; end() flushes the one still spoken (odd-sized frames)', async () => {
    const first = pcmOf('0880');
    const silence = Buffer.alloc(3 * BYTES_PER_SECOND);
    // Cut mid-sentence, "had he married a more a amiable woman": the detector is still in speech when the audio stops.
    const second = pcmOf('0920').subarray(0, Math.round(2.5 * BYTES_PER_SECOND));
    const r = recorder();
    const rec = await startLiveRecognizer({ onEvent: r.onEvent });
    const secondStarted = r.next('speech_started').then(() => r.next('speech_started'));
    // 3001 bytes: every other frame ends inside a sample, which the helper must carry over.
    await feed(rec, Buffer.concat([first, silence, second]), 3001);
    const at = ((await secondStarted) as { at: number }).at;
    expect(at).toBeGreaterThan(seconds(first) + 2.5);
    expect(finals(r.events)).toHaveLength(1);
    await rec.end();
    const [a, b, ...more] = finals(r.events);
    expect(more).toEqual([]);
    expect(r.events[r.events.length - 1]!.type).toBe('utterance_end');
    expect(a!.end).toBeLessThanOrEqual(seconds(first));
    expect(b!.words[0]!.start).toBeGreaterThan(seconds(first) + 3);
    expect(wordErrorRate(textOf('0880'), a!.words.map((w) => w.text).join(' ')).wer).toBeLessThan(0.5);
    expect(wordErrorRate(textOf('0920').split(' ').slice(0, 8).join(' '), b!.words.map((w) => w.text).join(' ')).wer).toBeLessThan(0.5);
  });

  it('ends the utterance on finalize(): its final comes before the stream ends', async () => {
    const pcm = pcmOf('0880');
    const cut = 1.5 * BYTES_PER_SECOND;
    const r = recorder();
    const rec = await startLiveRecognizer({ onEvent: r.onEvent });
    await feed(rec, pcm.subarray(0, cut));
    const final = r.next('final');
    const ended = r.next('utterance_end');
    rec.finalize();
    const f = (await final) as Extract<LiveEvent, { type: 'final' }>;
    expect(f.words.length).toBeGreaterThan(0);
    expect(f.end).toBeLessThanOrEqual(1.5);
    expect(await ended).toEqual({ type: 'utterance_end', at: f.end });
    await feed(rec, pcm.subarray(cut));
    await rec.end();
    // The rest of the speech is a new utterance.
    expect(finals(r.events).length).toBe(2);
    expect(finals(r.events)[1]!.start).toBeGreaterThanOrEqual(f.end);
  });

  it('kill() stops at once: done and end() resolve, later writes are dropped, no process is left', async () => {
    const r = recorder();
    const rec = await startLiveRecognizer({ onEvent: r.onEvent });
    await feed(rec, pcmOf('0880').subarray(0, BYTES_PER_SECOND));
    expect(liveChildren()).toHaveLength(1);
    rec.kill();
    await expect(rec.write(pcmOf('0880'))).resolves.toBeUndefined();
    await expect(rec.end()).resolves.toBeUndefined();
    await expect(rec.done).resolves.toBeUndefined();
    // The caller's signal does the same, also before the recognizer is ready.
    const abort = new AbortController();
    const starting = startLiveRecognizer({ onEvent: () => {}, signal: abort.signal });
    abort.abort(new Error('caller went away'));
    await expect(starting).rejects.toThrow('caller went away');
  });

  it('rejects done with an EngineError when the process dies of a signal not its owner sent', async () => {
    const rec = await startLiveRecognizer({ onEvent: () => {} });
    const [pid] = liveChildren();
    process.kill(pid!, 'SIGTERM');
    await expect(rec.done).rejects.toThrow(new EngineError('the live recognizer exited with SIGTERM: no error output'));
    await expect(rec.write(Buffer.alloc(3200))).rejects.toBeInstanceOf(EngineError);
  });

  it('names how to build the helper when it is missing, and fails to start on a broken model', async () => {
    await expect(checkLiveBinary(LIVE_BINARY)).resolves.toBeUndefined();
    const missing = startLiveRecognizer({ binary: path.join(REPO, 'no-such-ps-live'), onEvent: () => {} });
    await expect(missing).rejects.toBeInstanceOf(EngineError);
    await expect(missing).rejects.toThrow(/no-such-ps-live is missing; build it with `node scripts\/build-native.js`.*libpocketsphinx-dev/);
    // A model folder whose files are there but are no model: the helper's own error and exit code.
    const broken = await tempDir('murmur-live-model-');
    try {
      await mkdir(path.join(broken.dir, 'en-us'));
      await writeFile(path.join(broken.dir, 'en-us.lm.bin'), '');
      await writeFile(path.join(broken.dir, 'cmudict-en-us.dict'), '');
      const failing = startLiveRecognizer({ modelDir: broken.dir, onEvent: () => {} });
      await expect(failing).rejects.toBeInstanceOf(EngineError);
      await expect(failing).rejects.toThrow('the live recognizer exited with code 1: ps-live: cannot load the decoder (check -hmm, -lm and -dict)');
    } finally {
      await broken.remove();
    }
  });
});
