/**
 * The windowed live recognizer (src/live/windowed-recognizer.ts) with real parts: Silero VAD v5
 * (../shared/models/silero_vad_v5.onnx, real weights) through sherpa-onnx-node, and batch engines'
 * own `recognize` on its windows: pocketsphinx_continuous on LibriVox speech for accuracy and
 * timing, whisper.cpp with its weightless test model for the plumbing. Audio is fed in 100 ms
 * frames as fast as write() takes it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { EngineError, type SpeechEngine } from '../src/engines/engine';
import { createPocketsphinxEngine } from '../src/engines/pocketsphinx';
import { createWhisperEngine } from '../src/engines/whisper';
import type { LiveEvent, LiveRecognizer } from '../src/live/live-events';
import { SILERO_VAD_FILE, sileroVadPath } from '../src/live/silero-vad';
import { startWindowedRecognizer, windowedStartLive } from '../src/live/windowed-recognizer';
import { BYTES_PER_SECOND, WAV_HEADER_BYTES } from '../src/pcm';
import { wordErrorRate } from '../src/wer';
import { librivoxUtterances, tempDir } from './fixtures';
import { feed, recorder } from './live-support';

const MODELS = path.resolve(__dirname, '../../../../shared/models');
/** The VAD as the service finds it (MURMUR_MODELS_DIR), else the copy beside the repository. */
const VAD =
  [process.env.MURMUR_TEST_VAD_MODEL, process.env.MURMUR_MODELS_DIR && sileroVadPath(process.env.MURMUR_MODELS_DIR), path.join(MODELS, SILERO_VAD_FILE)].find(
    (f): f is string => !!f && existsSync(f),
  ) ?? path.join(MODELS, SILERO_VAD_FILE);
const WHISPER = process.env.MURMUR_TEST_WHISPER_MODEL ?? path.join(MODELS, 'for-tests-ggml-tiny.en.bin');
const haveVad = existsSync(VAD);
if (!haveVad) process.stderr.write(`windowed recognizer tests skipped: no Silero VAD model at ${VAD}\n`);

const utterances = new Map(librivoxUtterances().map((u) => [u.id.slice(-4), u]));
const pcmOf = (id: string) => readFileSync(utterances.get(id)!.wav).subarray(WAV_HEADER_BYTES);
const textOf = (id: string) => utterances.get(id)!.text;
const seconds = (pcm: Buffer) => pcm.length / BYTES_PER_SECOND;

type Final = Extract<LiveEvent, { type: 'final' }>;
const finals = (events: LiveEvent[]) => events.filter((e): e is Final => e.type === 'final');
const textOfFinal = (f: Final) => f.words.map((w) => w.text).join(' ');


/** speech_started … utterance_end brackets, each final inside one, every utterance closed. */
function expectWellFormed(events: LiveEvent[]): void {
  let open = false;
  for (const e of events) {
    if (e.type === 'speech_started') expect(open).toBe(false);
    else expect(open).toBe(true);
    if (e.type === 'speech_started') open = true;
    if (e.type === 'utterance_end') open = false;
  }
  expect(open).toBe(false);
}

(haveVad ? describe : describe.skip)('windowed live recognizer (Silero VAD)', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  const pocketsphinx = createPocketsphinxEngine();
  beforeAll(async () => {
    tmp = await tempDir('murmur-windowed-');
  });
  afterAll(() => tmp?.remove());
  // Every stream's temp folder is gone once it ended or was killed.
  afterEach(async () => expect(await readdir(tmp.dir)).toEqual([]));

  it('over the pocketsphinx batch engine: two utterances 2 s apart give speech_started, partials, a final close to the reference and utterance_end each, at their times', async () => {
    const first = pcmOf('0880');
    const second = pcmOf('0920');
    const gap = Buffer.alloc(2 * BYTES_PER_SECOND);
    const r = recorder();
    const rec = await startWindowedRecognizer({ engine: pocketsphinx, vadModel: VAD, onEvent: r.onEvent, tmpDir: tmp.dir });
    await feed(rec, Buffer.concat([first, gap, second, Buffer.alloc(BYTES_PER_SECOND)]));
    await rec.end();
    await expect(rec.done).resolves.toBeUndefined();

    expectWellFormed(r.events);
    const types = r.events.map((e) => e.type);
    expect(types.filter((t) => t === 'speech_started')).toHaveLength(2);
    // Fed faster than real time, most partials find the engine busy and are skipped; the first is not.
    expect(types.indexOf('partial')).toBeGreaterThan(0);
    expect(types.indexOf('partial')).toBeLessThan(types.indexOf('final'));
    const [a, b, ...more] = finals(r.events);
    expect(more).toEqual([]);
    expect(wordErrorRate(textOf('0880'), textOfFinal(a!)).wer).toBeLessThan(0.5);
    expect(wordErrorRate(textOf('0920'), textOfFinal(b!)).wer).toBeLessThan(0.5);
    // Stream times: the first utterance within its audio, the second after the silence.
    expect(a!.end).toBeLessThanOrEqual(seconds(first) + 0.1);
    expect(b!.words[0]!.start).toBeGreaterThan(seconds(first) + 1.5);
    expect(b!.end).toBeLessThanOrEqual(seconds(first) + 2 + seconds(second) + 0.1);
    const starts = r.events.filter((e): e is Extract<LiveEvent, { type: 'speech_started' }> => e.type === 'speech_started');
    expect(starts[1]!.at).toBeGreaterThan(seconds(first) + 1);
    for (const f of [a!, b!]) {
      for (const w of f.words) {
        expect(w.start).toBeLessThanOrEqual(w.end);
        expect(w.start).toBeGreaterThanOrEqual(f.start);
        expect(w.end).toBeLessThanOrEqual(f.end);
      }
    }
    // Each partial is the utterance so far, ending where the audio had got to.
    for (const p of r.events.filter((e): e is Extract<LiveEvent, { type: 'partial' }> => e.type === 'partial')) {
      expect(p.text.length).toBeGreaterThan(0);
      expect(p.end).toBeGreaterThan(p.start);
    }
  }, 30_000);

  it('ends the utterance on finalize(): its final comes while the speaker goes on, and the rest is a new utterance', async () => {
    const pcm = pcmOf('0880');
    const cut = 1.5 * BYTES_PER_SECOND;
    const r = recorder();
    const rec = await startWindowedRecognizer({ engine: pocketsphinx, vadModel: VAD, onEvent: r.onEvent, tmpDir: tmp.dir, partialMs: 0 });
    await feed(rec, pcm.subarray(0, cut));
    const final = r.next('final');
    const ended = r.next('utterance_end');
    rec.finalize();
    const f = (await final) as Final;
    expect(f.words.length).toBeGreaterThan(0);
    expect(f.end).toBeLessThanOrEqual(1.5);
    expect(((await ended) as { at: number }).at).toBeCloseTo(1.5, 1);
    await feed(rec, Buffer.concat([pcm.subarray(cut), Buffer.alloc(BYTES_PER_SECOND)]));
    await rec.end();
    expectWellFormed(r.events);
    const all = finals(r.events);
    expect(all).toHaveLength(2);
    expect(all[1]!.start).toBeGreaterThanOrEqual(f.end);
    // Cut mid-word and each half recognised without the other's context: close, not as close as whole.
    expect(wordErrorRate(textOf('0880'), all.map(textOfFinal).join(' ')).wer).toBeLessThan(0.75);
  }, 30_000);

  it('kill() stops at once and removes the temp folder; an engine failure rejects done with an EngineError', async () => {
    const r = recorder();
    const rec = await startWindowedRecognizer({ engine: pocketsphinx, vadModel: VAD, onEvent: r.onEvent, tmpDir: tmp.dir });
    await feed(rec, pcmOf('0880').subarray(0, 2 * BYTES_PER_SECOND));
    rec.kill();
    await expect(rec.done).resolves.toBeUndefined();
    await expect(rec.write(pcmOf('0880'))).resolves.toBeUndefined();

    const broken = createPocketsphinxEngine({ binary: path.join(tmp.dir, 'no-such-pocketsphinx') });
    const failing = await startWindowedRecognizer({ engine: broken, vadModel: VAD, onEvent: () => {}, tmpDir: tmp.dir, partialMs: 0 });
    await feed(failing, pcmOf('0880'));
    await expect(failing.end()).rejects.toThrow(EngineError);
    await expect(failing.done).rejects.toThrow(/no-such-pocketsphinx was not found/);
  }, 30_000);

  it('refuses to start without the VAD model, naming the fetch command, and never loads a file that is not the pinned model', async () => {
    const start = windowedStartLive(pocketsphinx, {});
    await expect(start({ onEvent: () => {} })).rejects.toThrow(new EngineError('live transcription with pocketsphinx needs the Silero VAD model in MURMUR_MODELS_DIR; fetch it with `npm run models -- fetch vad`'));
    const missing = path.join(tmp.dir, 'models', 'silero_vad_v5.onnx');
    const noFile = windowedStartLive(pocketsphinx, { vadModel: missing })({ onEvent: () => {} });
    await expect(noFile).rejects.toBeInstanceOf(EngineError);
    await expect(noFile).rejects.toThrow(`the Silero VAD model ${missing} is missing; fetch it with \`npm run models -- fetch vad\``);
    // ONNX Runtime would abort the whole process on this file: the checksum stops it first.
    const damaged = path.join(tmp.dir, 'damaged.onnx');
    await writeFile(damaged, 'not a model');
    try {
      await expect(startWindowedRecognizer({ engine: pocketsphinx, vadModel: damaged, onEvent: () => {} })).rejects.toThrow(/is not the pinned Silero VAD v5 .*fetch vad --force/);
    } finally {
      await rm(damaged);
    }
  });

  (existsSync(WHISPER) ? describe : describe.skip)('whisper (whisper.cpp test model)', () => {
    let whisper: SpeechEngine;
    beforeAll(async () => {
      // partialMs 0: one recognition per utterance (the test model costs ~16 s of CPU per window).
      whisper = await createWhisperEngine({ modelPath: WHISPER, threads: 2, live: { vadModel: VAD, tmpDir: tmp.dir, partialMs: 0 } });
    });
    afterAll(() => whisper?.close?.());

    // The test model has no weights (and costs ~16 s of CPU per window whatever it hears), so this
    // checks the wiring only — createWhisperEngine's `live` option gives a startLive that runs the
    // windowed recognizer with the VAD and ends cleanly; the windows themselves reaching an engine's
    // recognize are the pocketsphinx cases above. Silence: the VAD hears nothing, nothing is recognised.
    it('wires startLive through the windowed recognizer: silence gives no event and ends cleanly', async () => {
      const r = recorder();
      const rec = await whisper.startLive!({ onEvent: r.onEvent, language: 'en' });
      await feed(rec, Buffer.alloc(2 * BYTES_PER_SECOND));
      await rec.end();
      await expect(rec.done).resolves.toBeUndefined();
      expect(r.events).toEqual([]);
    }, 60_000);
  });
});
