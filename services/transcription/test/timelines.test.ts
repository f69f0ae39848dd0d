/**
 * Transcripts as timelines over gRPC (issue 32), end to end on real recognised speech: a real
 * transcription server with the real billing and library services, ffmpeg and pocketsphinx on
 * pocketsphinx-testdata's recordings (LibriVox sentences, a card-reader's spoken digits), and
 * diarization through sherpa-onnx-node on two espeak-ng voices. No embedding or verified
 * segmentation model can be had here, so the diarizer runs on the stand-in models the
 * diarization tests build (stand-in-models.ts): this proves the path — options, the models'
 * file names, the child process, speakers on words and segments, storage — not accuracy.
 *
 * Every refusal is checked to come before anything is held: no release seen, nothing reserved.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { REDACTION_POLICIES, wordsFromWire } from '@murmur/contract';
import type { timeline, transcription } from '@murmur/proto';
import { capabilitiesOf, type EngineCapabilities, type SpeechEngine } from '../src/engines/engine';
import { createPocketsphinxEngine } from '../src/engines/pocketsphinx';
import { diarizationPort, type DiarizationPort } from '../src/diarization/port';
import { EMBEDDING_FILE, SEGMENTATION_FILES } from '../src/diarization/models';
import { ffmpeg, LIBRIVOX_DIR, tempDir } from './fixtures';
import { config, failure, newUser, startStack, transcribeFile, usageOf, type Stack } from './harness';
import { standInEmbeddingModel, standInSegmentationModel } from './stand-in-models';
import { twoVoices, type Conversation } from './two-voices';

const pocketsphinx = createPocketsphinxEngine();
/** pocketsphinx, with its capabilities as the current test says (an engine without word times, …). */
let capabilities: EngineCapabilities = capabilitiesOf(pocketsphinx);
const engine: SpeechEngine = {
  name: 'pocketsphinx',
  model: 'en-us',
  get capabilities() {
    return capabilities;
  },
  supportsLanguage: (l) => pocketsphinx.supportsLanguage!(l),
  unknownWords: (terms) => pocketsphinx.unknownWords!(terms),
  recognize: (wav, opts) => pocketsphinx.recognize(wav, opts),
};

let stack: Stack;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let modelsDir: string;
let diarization: DiarizationPort;
let speechWav: string;
let phoneWav: string;
let conversationWav: string;
let conversation: Conversation;

const timelineOptions = (o: Partial<timeline.TimelineOptions>): timeline.TimelineOptions => ({
  words: false,
  diarize: false,
  speakersExpected: 0,
  keyterms: [],
  redactPii: false,
  redactPiiPolicies: [],
  redactPiiSub: '',
  ...o,
});
const transcribe = (file: string, user: string, o: Partial<timeline.TimelineOptions> = {}, more: Partial<transcription.TranscribeConfig> = {}) =>
  transcribeFile(stack.client, file, config(user, { timeline: timelineOptions(o), ...more }));
const wordsOf = (r: transcription.TranscribeResponse) => wordsFromWire(r.words, r.speakers.map((s) => ({ id: s.id, name: s.name || null })));

/**
 * The speech recognised once with words, saved, and `language: "auto"`: the words test and the
 * language test each check their part of the one result (a recognition fewer).
 */
let speechWithWords: Promise<{ user: string; r: transcription.TranscribeResponse }> | undefined;
const recognisedSpeech = () =>
  (speechWithWords ??= (async () => {
    const user = newUser();
    return { user, r: await transcribe(speechWav, user, { words: true }, { save: true, language: 'auto' }) };
  })());

beforeAll(async () => {
  tmp = await tempDir('murmur-timelines-');
  modelsDir = path.join(tmp.dir, 'models');
  await mkdir(modelsDir);
  diarization = diarizationPort(modelsDir);
  stack = await startStack({ engine, diarization });
  // Two LibriVox sentences (9.3 s), and the same followed by a card-reader saying "five five" five times: ten digits.
  speechWav = path.join(tmp.dir, 'speech.wav');
  phoneWav = path.join(tmp.dir, 'phone.wav');
  const [a, b] = ['0880', '0920'].map((n) => path.join(LIBRIVOX_DIR, `sense_and_sensibility_01_austen_64kb-${n}.wav`));
  const fives = path.join(LIBRIVOX_DIR, '..', 'cards', '004.wav');
  await ffmpeg(['-i', a!, '-i', b!, '-filter_complex', '[0][1]concat=n=2:v=0:a=1', '-ar', '16000', '-ac', '1', speechWav]);
  await ffmpeg(['-i', a!, ...Array(5).fill(['-i', fives]).flat(), '-filter_complex', '[0][1][2][3][4][5]concat=n=6:v=0:a=1', '-ar', '16000', '-ac', '1', phoneWav]);
  conversation = await twoVoices(tmp.dir);
  conversationWav = path.join(tmp.dir, 'conversation.wav');
  const raw = path.join(tmp.dir, 'conversation.f32');
  await writeFile(raw, Buffer.from(conversation.samples.buffer));
  await ffmpeg(['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', raw, conversationWav]);
}, 120_000);
afterEach(() => {
  capabilities = capabilitiesOf(pocketsphinx);
});
afterAll(async () => {
  await diarization?.close();
  await stack?.stop();
  await tmp?.remove();
});

/** Runs `call`, which must be refused with `param` before any credit is held. */
async function refusedBeforeHolding(call: Promise<unknown>, param: string, message?: RegExp): Promise<void> {
  const releases = stack.releases.length;
  const err = await failure(call);
  expect({ code: err.code, param: err.param }).toEqual({ code: 'invalid_request', param });
  if (message) expect(err.message).toMatch(message);
  expect(stack.releases).toHaveLength(releases);
}

describe('words', () => {
  it('answers every recognised word with its times and confidence, and stores them with a saved transcript', async () => {
    const { user, r } = await recognisedSpeech();
    const words = wordsOf(r);
    expect(words.length).toBeGreaterThan(20);
    expect(words.map((w) => w.text).join(' ')).toBe(r.text);
    let at = 0;
    for (const w of words) {
      expect(w.start).toBeGreaterThanOrEqual(at);
      expect(w.end).toBeGreaterThanOrEqual(w.start);
      expect(w.end).toBeLessThanOrEqual(r.durationSeconds + 0.001);
      expect(w.confidence).not.toBeNull();
      expect(w.confidence!).toBeGreaterThanOrEqual(0);
      expect(w.confidence!).toBeLessThanOrEqual(1);
      expect(w.speaker).toBeNull();
      at = w.start;
    }
    // Each segment's words lie within it.
    for (const s of r.segments) {
      const inside = words.filter((w) => w.start >= s.startSeconds - 0.001 && w.end <= s.endSeconds + 0.001);
      expect(inside.map((w) => w.text).join(' ')).toBe(s.text);
    }
    expect(r.speakers).toEqual([]);
    expect(r.languageConfidence).toBeUndefined();
    const { recording } = await stack.library.getRecording({ ownerId: user, recordingId: r.recordingId, includeWords: true });
    expect(recording?.transcript?.timeline?.wordCount).toBe(words.length);
    expect(wordsFromWire(recording?.transcript?.timeline?.words, []).map((w) => [w.text, w.start, w.end])).toEqual(words.map((w) => [w.text, w.start, w.end]));
  });

  it('refuses `words` from an engine without word times, before anything is held', async () => {
    capabilities = { words: false, languageDetection: false, keyterms: 'prompt' };
    const user = newUser();
    await refusedBeforeHolding(transcribe(speechWav, user, { words: true }), 'words', /pocketsphinx engine gives no word times/);
    expect(await usageOf(stack.billing, user)).toMatchObject({ creditsUsed: 0, creditsReserved: 0 });
  });

  it('answers `language: "auto"` with the English it recognises and no confidence; another language names the engine', async () => {
    const { r } = await recognisedSpeech();
    expect(r.language).toBe('en');
    expect(r.languageConfidence).toBeUndefined();
    await refusedBeforeHolding(transcribe(speechWav, newUser(), {}, { language: 'de' }), 'language', /pocketsphinx/);
  });
});

describe('key terms', () => {
  it('takes terms pocketsphinx’s dictionary knows, and refuses a word it lacks by name, before anything is held', async () => {
    const r = await transcribe(speechWav, newUser(), { keyterms: ['married', 'respectable man'] });
    expect(r.text).toMatch(/married/);
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { keyterms: ['Murmurly', 'married'] }), 'keyterms', /"murmurly".*not in its dictionary/);
  });

  it('refuses too many, too long or odd terms by the contract’s rules', async () => {
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { keyterms: Array.from({ length: 51 }, (_, i) => `term${i}`) }), 'keyterms');
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { keyterms: ['x'.repeat(51)] }), 'keyterms');
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { keyterms: ['<script>'] }), 'keyterms');
  });
});

describe('redaction', () => {
  it('redacts a phone number said as digits from text, segments, words and the saved recording', async () => {
    const user = newUser();
    const plain = await transcribe(phoneWav, user);
    // What pocketsphinx hears: the digits, as words (the precondition of this test).
    expect(plain.text).toMatch(/(five ){9}five/);
    const r = await transcribe(phoneWav, user, { words: true, redactPii: true, redactPiiPolicies: ['phone_number'] }, { save: true });
    expect(r.text).toContain('[PHONE_NUMBER]');
    expect(r.text).not.toMatch(/five/);
    expect(r.segments.map((s) => s.text).join(' ')).toContain('[PHONE_NUMBER]');
    expect(JSON.stringify(r.segments)).not.toMatch(/five/);
    const words = wordsOf(r);
    expect(words.map((w) => w.text)).toContain('[PHONE_NUMBER]');
    expect(words.some((w) => w.text === 'five')).toBe(false);
    // The sentence before it is kept as recognised.
    expect(r.text.startsWith(plain.text.slice(0, 20))).toBe(true);
    const { recording } = await stack.library.getRecording({ ownerId: user, recordingId: r.recordingId, includeWords: true });
    expect(JSON.stringify([recording?.transcript?.text, recording?.transcript?.segments, wordsFromWire(recording?.transcript?.timeline?.words, [])])).not.toMatch(/five/);
    // Redaction costs nothing extra.
    expect(r.creditsCharged).toBe(plain.creditsCharged);
  });

  it('refuses an unknown policy, a style without redact_pii, and an unknown style, before anything is held', async () => {
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { redactPii: true, redactPiiPolicies: ['passport'] }), 'redact_pii_policies', new RegExp(REDACTION_POLICIES[0]));
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { redactPiiSub: 'mask' }), 'redact_pii_sub');
    await refusedBeforeHolding(transcribe(speechWav, newUser(), { redactPii: true, redactPiiSub: 'hash' }), 'redact_pii_sub');
  });
});

describe('speakers', () => {
  it('refuses `diarize` while its models are missing, naming them, before anything is held; then finds two voices once they are there', async () => {
    await refusedBeforeHolding(transcribe(conversationWav, newUser(), { diarize: true }), 'diarize', new RegExp(`${EMBEDDING_FILE}.*npm run models -- fetch diarization`));
    await refusedBeforeHolding(transcribe(conversationWav, newUser(), { speakersExpected: 2 }), 'speakers_expected');

    // The operator fetches the models (here: the stand-ins, under the names the fetch writes).
    await mkdir(path.join(modelsDir, path.dirname(SEGMENTATION_FILES[0])), { recursive: true });
    await writeFile(path.join(modelsDir, SEGMENTATION_FILES[0]), standInSegmentationModel());
    await writeFile(path.join(modelsDir, EMBEDDING_FILE), standInEmbeddingModel());

    const user = newUser();
    const plain = await transcribe(conversationWav, user);
    const r = await transcribe(conversationWav, user, { diarize: true, words: true }, { save: true, title: 'Budget' });
    expect(r.speakers).toEqual([
      { id: 'S1', name: '' },
      { id: 'S2', name: '' },
    ]);
    // A, B, A: the segments' speakers change where the voices do (within half a second).
    const turns: Array<{ speaker: string; start: number; end: number }> = [];
    for (const s of r.segments) {
      const last = turns[turns.length - 1];
      if (last && last.speaker === s.speaker) last.end = s.endSeconds;
      else turns.push({ speaker: s.speaker!, start: s.startSeconds, end: s.endSeconds });
    }
    expect(turns.map((t) => t.speaker)).toEqual(['S1', 'S2', 'S1']);
    // Each run of segments lies within its voice's turn (segments start at the first word pocketsphinx made out).
    turns.forEach((t, i) => {
      expect(t.start).toBeGreaterThan(conversation.turns[i]!.start - 0.5);
      expect(t.end).toBeLessThan(conversation.turns[i]!.end + 0.5);
    });
    // Every word has the speaker of the voice it was said in.
    for (const w of wordsOf(r)) {
      const truth = conversation.turns.findIndex((t) => w.start >= t.start - 0.25 && w.start <= t.end + 0.25);
      if (truth === -1) continue;
      expect({ word: w.text, at: w.start, speaker: w.speaker }).toEqual({ word: w.text, at: w.start, speaker: truth === 1 ? 'S2' : 'S1' });
    }
    // Stored with the recording, and nameable there.
    const named = await stack.library.setSpeakerNames({ ownerId: user, recordingId: r.recordingId, names: { S1: 'Maria', S2: 'Ken' } });
    expect(named.recording?.transcript?.timeline?.speakers).toEqual([
      { id: 'S1', name: 'Maria' },
      { id: 'S2', name: 'Ken' },
    ]);
    // Diarization costs nothing extra.
    expect(r.creditsCharged).toBe(plain.creditsCharged);

    const two = await transcribe(conversationWav, newUser(), { diarize: true, speakersExpected: 2 });
    expect(two.speakers.map((s) => s.id)).toEqual(['S1', 'S2']);
  }, 120_000);
});
