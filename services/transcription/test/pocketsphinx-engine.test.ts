/**
 * The pocketsphinx engine on real speech. Thresholds were measured on this machine's Debian
 * pocketsphinx 0.8+5prealpha with pocketsphinx-en-us and the engine's flags (deterministic:
 * same input, same words):
 * - LibriVox human speech (pocketsphinx-testdata, 71 words): pooled WER 0.366 → limit 0.45.
 * - espeak-ng robotic speech (10 sentences, 93 words, 150 wpm): WER 0.645 → limit 0.80; the
 *   generic en-us acoustic model was trained on human voices and espeak's formant synthesis is
 *   far from them (e.g. "the quick brown fox" → "we probably got").
 * A control shows the limits bite: the same hypotheses scored against the wrong references give
 * WER ≥ 0.85, and silence or a broken decoder gives 1.0.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { createPocketsphinxEngine } from '../src/engines/pocketsphinx';
import { EngineError } from '../src/engines/engine';
import { wordErrorRate } from '../src/wer';
import { ESPEAK_SENTENCES, ffmpeg, librivoxUtterances, probeSeconds, speak, tempDir } from './fixtures';

const engine = createPocketsphinxEngine();

/** The pid of this process's child running `name`, once it runs (polled: no timing asserted). */
async function childNamed(name: string): Promise<number> {
  for (;;) {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid …"; comm is cut to 15 characters.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === process.pid && comm === name.slice(0, 15)) return Number(pid);
      } catch {
        // the process ended while we read
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
const live = () => new AbortController().signal;
let tmp: Awaited<ReturnType<typeof tempDir>>;
/** The espeak-ng passage at 16 kHz (about 30 s). */
let passage: string;

beforeAll(async () => {
  tmp = await tempDir('murmur-ps-');
  const espeakWav = await speak(path.join(tmp.dir, 'passage.wav'), `${ESPEAK_SENTENCES.join('. ')}.`);
  passage = path.join(tmp.dir, 'passage16.wav');
  await ffmpeg(['-i', espeakWav, '-ar', '16000', '-ac', '1', passage]);
});
afterAll(() => tmp.remove());

describe('pocketsphinx engine', () => {
  it('recognises LibriVox speech and espeak-ng speech within the measured word error rates', async () => {
    const utterances = librivoxUtterances();
    expect(utterances).toHaveLength(5);
    // Two at a time: each recognition is its own pocketsphinx process.
    const inputs = [...utterances.map((u) => u.wav), passage];
    const results: Array<Awaited<ReturnType<typeof engine.recognize>>> = [];
    for (let i = 0; i < inputs.length; i += 2) {
      results.push(...(await Promise.all(inputs.slice(i, i + 2).map((wav) => engine.recognize(wav, { language: 'en', signal: live() })))));
    }
    const human = results.slice(0, 5);
    const robot = results[5]!;

    const pooled = wordErrorRate(utterances.map((u) => u.text).join(' '), human.map((r) => r.text).join(' '));
    expect(pooled.wer).toBeLessThanOrEqual(0.45);
    expect(wordErrorRate(ESPEAK_SENTENCES.join(' '), robot.text).wer).toBeLessThanOrEqual(0.8);

    // Control: each hypothesis against another utterance's reference is far worse.
    human.forEach((r, i) => {
      const other = utterances[(i + 1) % utterances.length]!.text;
      expect(wordErrorRate(other, r.text).wer).toBeGreaterThanOrEqual(0.85);
    });

    // Word times: in order, inside the file, grouped into segments that reproduce the text.
    for (const [i, r] of human.entries()) {
      const seconds = await probeSeconds(utterances[i]!.wav);
      let cursor = 0;
      for (const s of r.segments) {
        expect(s.start).toBeGreaterThanOrEqual(cursor);
        expect(s.end).toBeGreaterThan(s.start);
        expect(s.end).toBeLessThanOrEqual(seconds + 0.05);
        cursor = s.end;
      }
      expect(r.segments.map((s) => s.text).join(' ')).toBe(r.text);
      expect(r.language).toBe('en');
    }
  });

  it('returns no words for silence', async () => {
    const wav = path.join(tmp.dir, 'silence.wav');
    await ffmpeg(['-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '3', wav]);
    const r = await engine.recognize(wav, { language: '', signal: live() });
    expect(r).toEqual({ text: '', segments: [], words: [], language: 'en' });
  });

  it('kills pocketsphinx when the signal aborts', async () => {
    // Forty times the passage (about 20 minutes of audio) takes pocketsphinx far longer than
    // jest's test timeout: the call can only end in time because the abort ended it.
    const long = path.join(tmp.dir, 'passage-x40.wav');
    await ffmpeg(['-stream_loop', '39', '-i', passage, '-c', 'copy', long]);
    expect(await probeSeconds(long)).toBeGreaterThan(600);
    const controller = new AbortController();
    const run = engine.recognize(long, { language: '', signal: controller.signal });
    const child = await childNamed('pocketsphinx_continuous');
    controller.abort(new Error('client went away'));
    await expect(run).rejects.toThrow('client went away');
    expect(existsSync(`/proc/${child}`)).toBe(false);
  });

  it('fails with the Debian packages to install when the binary is missing', async () => {
    const missing = createPocketsphinxEngine({ binary: 'pocketsphinx_continuous_not_installed' });
    const err = await missing.recognize(librivoxUtterances()[0]!.wav, { language: '', signal: live() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as Error).message).toContain('apt-get install pocketsphinx pocketsphinx-en-us');
  });

  it('fails with the Debian packages to install when the model is missing', async () => {
    const missing = createPocketsphinxEngine({ modelDir: path.join(tmp.dir, 'no-model') });
    await expect(missing.recognize(librivoxUtterances()[0]!.wav, { language: '', signal: live() })).rejects.toThrow('pocketsphinx-en-us');
  });

  it('fails (with the exit code, not the audio) on a file it cannot read', async () => {
    const bad = path.join(tmp.dir, 'bad.wav');
    await writeFile(bad, Buffer.from('RIFF....WAVEfmt garbage that is no header'));
    await expect(engine.recognize(bad, { language: '', signal: live() })).rejects.toThrow(/exited with/);
  });

  it.each([
    ['', true],
    ['en', true],
    ['en-US', true],
    ['de', false],
    ['fr-CA', false],
  ])('supports language %j: %s', (language, ok) => {
    expect(engine.supportsLanguage?.(language)).toBe(ok);
  });
});
