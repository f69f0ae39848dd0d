/**
 * Diarization through sherpa-onnx-node in its child process, on a conversation espeak-ng
 * speaks in two clearly different voices (A, B, A; two-voices.ts).
 *
 * No speaker-embedding model can be had on these machines, so the tests build a stand-in
 * (stand-in-models.ts: where a voice's energy lies, not who it is) and, where no verified
 * pyannote segmentation-3.0 file is at hand, a stand-in segmentation model too. What passes
 * proves the path — models loaded in the child, audio across, sherpa-onnx's windows,
 * embeddings and clustering, the turns' times back, two speakers at the right moments, abort
 * and failure handling — and nothing about accuracy on real speech. With the real
 * segmentation model (MURMUR_TEST_SEGMENTATION_MODEL, MURMUR_MODELS_DIR or ../shared/models,
 * when its SHA-256 is the published one) the same checks run on it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { Timeline } from '@murmur/contract';
import { assignSpeakers, createDiarizer, DiarizationError, SEGMENTATION_FILES, type Diarizer, type DiarizationModels, type SpeakerTurn } from '../src/diarization';
import { tempDir } from './fixtures';
import { standInEmbeddingModel, standInSegmentationModel } from './stand-in-models';
import { repeated, twoVoices, type Conversation } from './two-voices';

/** How far a found turn boundary may be from the true one. */
const TOLERANCE_SECONDS = 0.5;

/** The published SHA-256 of pyannote segmentation-3.0 for sherpa-onnx (int8, float). */
const PUBLISHED_SEGMENTATION = new Set([
  'd582f4b4c6b48205de7e0643c57df0df5615a3c176189be3fc461e9d18827b5d',
  '220ad67ca923bef2fa91f2390c786097bf305bceb5e261d4af67b38e938e1079',
]);

/** A real segmentation model with the published checksum, or why there is none. */
function realSegmentationModel(): { file: string } | { why: string } {
  const candidates = [
    process.env.MURMUR_TEST_SEGMENTATION_MODEL,
    ...(process.env.MURMUR_MODELS_DIR ? SEGMENTATION_FILES.map((f) => path.resolve(process.env.MURMUR_MODELS_DIR!, f)) : []),
    ...SEGMENTATION_FILES.map((f) => path.resolve(__dirname, '../../../../shared/models', f)),
  ].filter((f): f is string => !!f && existsSync(f));
  for (const file of candidates) {
    if (PUBLISHED_SEGMENTATION.has(createHash('sha256').update(readFileSync(file)).digest('hex'))) return { file };
  }
  return {
    why: candidates.length
      ? `${candidates.join(', ')}: not the published file (SHA-256 differs; the ../shared/models copy lost its CR bytes to a line-ending conversion and does not load)`
      : 'no pyannote segmentation-3.0 model file',
  };
}

/** Consecutive turns of one speaker joined: the speaker changes of the result. */
function changes(turns: readonly SpeakerTurn[]): SpeakerTurn[] {
  const out: SpeakerTurn[] = [];
  for (const t of turns) {
    const last = out[out.length - 1];
    if (last && last.speaker === t.speaker) last.end = Math.max(last.end, t.end);
    else out.push({ ...t });
  }
  return out;
}

/** Asserts the turns are the conversation's: A, B, A by two speakers, each boundary within the tolerance. */
function expectTheConversation(turns: readonly SpeakerTurn[], conversation: Conversation): void {
  const found = changes(turns);
  expect(new Set(turns.map((t) => t.speaker)).size).toBe(2);
  expect(found).toHaveLength(3);
  expect(found[0]!.speaker).toBe(found[2]!.speaker);
  expect(found[1]!.speaker).not.toBe(found[0]!.speaker);
  found.forEach((turn, i) => {
    const truth = conversation.turns[i]!;
    expect(Math.abs(turn.start - truth.start)).toBeLessThan(TOLERANCE_SECONDS);
    expect(Math.abs(turn.end - truth.end)).toBeLessThan(TOLERANCE_SECONDS);
  });
}

let tmp: Awaited<ReturnType<typeof tempDir>>;
let conversation: Conversation;
let standIn: DiarizationModels;

beforeAll(async () => {
  tmp = await tempDir('murmur-diarization-');
  conversation = await twoVoices(tmp.dir);
  standIn = { segmentation: path.join(tmp.dir, 'segmentation.onnx'), embedding: path.join(tmp.dir, 'embedding.onnx') };
  await writeFile(standIn.segmentation, standInSegmentationModel());
  await writeFile(standIn.embedding, standInEmbeddingModel());
});
afterAll(async () => {
  await tmp?.remove();
});

const signal = () => new AbortController().signal;

describe('diarizer (stand-in segmentation and embedding models)', () => {
  let diarizer: Diarizer;
  beforeAll(async () => {
    diarizer = await createDiarizer(standIn);
  });
  afterAll(async () => {
    await diarizer?.close();
  });

  it('finds the two voices of A, B, A at their times when told there are two', async () => {
    expect(conversation.seconds).toBeGreaterThan(15); // more than one 10 s window: the embedding path runs
    const progress: Array<[number, number]> = [];
    const turns = await diarizer.diarize(conversation.samples, { speakersExpected: 2, signal: signal(), onProgress: (d, t) => progress.push([d, t]) });
    expectTheConversation(turns, conversation);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[progress.length - 1]![0]).toBe(progress[progress.length - 1]![1]);
  });

  it('finds the same two voices without being told how many (the distance threshold decides)', async () => {
    expectTheConversation(await diarizer.diarize(conversation.samples, { signal: signal() }), conversation);
  });

  it.each([0, 1.5, -2])('refuses speakersExpected %p', async (n) => {
    await expect(diarizer.diarize(conversation.samples, { speakersExpected: n, signal: signal() })).rejects.toThrow(RangeError);
  });

  it('answers no turns for silence and for no samples', async () => {
    expect(await diarizer.diarize(new Float32Array(12 * 16_000), { signal: signal() })).toEqual([]);
    expect(await diarizer.diarize(new Float32Array(0), { signal: signal() })).toEqual([]);
  });

  it('puts the turns on a timeline: each word gets its voice, a segment spanning a change is split there', async () => {
    const turns = await diarizer.diarize(conversation.samples, { speakersExpected: 2, signal: signal() });
    const [a1, b, a2] = conversation.turns as [Conversation['turns'][number], Conversation['turns'][number], Conversation['turns'][number]];
    // Two words well inside each true turn, around its middle.
    const mid = (t: { start: number; end: number }) => (t.start + t.end) / 2;
    const wordsIn = (t: { start: number; end: number }, texts: [string, string]) => [
      { text: texts[0], start: mid(t) - 1, end: mid(t) - 0.6, confidence: 0.9, speaker: null },
      { text: texts[1], start: mid(t) + 0.6, end: mid(t) + 1, confidence: 0.9, speaker: null },
    ];
    const timeline: Timeline = {
      text: 'budget as it is marketing customers thursday figures',
      words: [...wordsIn(a1, ['budget', 'is']), ...wordsIn(b, ['marketing', 'customers']), ...wordsIn(a2, ['thursday', 'figures'])],
      // One segment across the first change, one for the last turn.
      segments: [
        { start: a1.start, end: b.end, text: 'Budget, is; marketing customers.', speaker: null },
        { start: a2.start, end: a2.end, text: 'Thursday figures.', speaker: null },
      ],
      speakers: [],
    };
    const out = assignSpeakers(timeline, turns);
    expect(out.words.map((w) => [w.text, w.speaker])).toEqual([
      ['budget', 'S1'], ['is', 'S1'], ['marketing', 'S2'], ['customers', 'S2'], ['thursday', 'S1'], ['figures', 'S1'],
    ]);
    expect(out.segments).toEqual([
      { start: a1.start, end: mid(a1) + 1, text: 'budget is', speaker: 'S1' },
      { start: mid(b) - 1, end: b.end, text: 'marketing customers', speaker: 'S2' },
      { start: a2.start, end: a2.end, text: 'Thursday figures.', speaker: 'S1' },
    ]);
    expect(out.speakers).toEqual([{ id: 'S1', name: null }, { id: 'S2', name: null }]);
  });

  it('stops a call aborted while it runs, and the next call starts a new process and works', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    const long = repeated(conversation.samples, 6);
    const aborted = diarizer.diarize(long, {
      signal: controller.signal,
      // The first progress report: the child is busy with this call.
      onProgress: () => controller.abort(reason),
    });
    await expect(aborted).rejects.toBe(reason);
    expectTheConversation(await diarizer.diarize(conversation.samples, { speakersExpected: 2, signal: signal() }), conversation);
  });

  it('never starts a call aborted while it waits behind another', async () => {
    const controller = new AbortController();
    const first = diarizer.diarize(conversation.samples, { speakersExpected: 2, signal: signal() });
    const second = diarizer.diarize(conversation.samples, { signal: controller.signal });
    controller.abort(new Error('cancelled'));
    await expect(second).rejects.toThrow('cancelled');
    expectTheConversation(await first, conversation);
  });
});

describe('diarizer with models that do not load', () => {
  it('fails createDiarizer with a DiarizationError when a model file is damaged, and this process lives on', async () => {
    const damaged = path.join(tmp.dir, 'damaged.onnx');
    await writeFile(damaged, Buffer.from(standInSegmentationModel()).subarray(0, 5000));
    const failure = createDiarizer({ segmentation: damaged, embedding: standIn.embedding });
    await expect(failure).rejects.toBeInstanceOf(DiarizationError);
    await expect(failure).rejects.toThrow(/could not be loaded/);
  });

  it('fails createDiarizer when the embedding model lacks metadata sherpa-onnx requires (it exits the process there)', async () => {
    const incomplete = path.join(tmp.dir, 'no-output-dim.onnx');
    await writeFile(incomplete, standInEmbeddingModel({ omitMetadata: ['output_dim'] }));
    const failure = createDiarizer({ segmentation: standIn.segmentation, embedding: incomplete });
    await expect(failure).rejects.toBeInstanceOf(DiarizationError);
    await expect(failure).rejects.toThrow(/output_dim/);
  });

  it('fails createDiarizer when a model file is missing', async () => {
    await expect(createDiarizer({ segmentation: standIn.segmentation, embedding: path.join(tmp.dir, 'absent.onnx') })).rejects.toBeInstanceOf(DiarizationError);
  });
});

const real = realSegmentationModel();
if ('why' in real) process.stderr.write(`diarization with the real segmentation model skipped: ${real.why}\n`);

('file' in real ? describe : describe.skip)('diarizer (pyannote segmentation-3.0, stand-in embedding model)', () => {
  it('finds the two voices of A, B, A at their times', async () => {
    const diarizer = await createDiarizer({ segmentation: (real as { file: string }).file, embedding: standIn.embedding });
    try {
      expectTheConversation(await diarizer.diarize(conversation.samples, { speakersExpected: 2, signal: signal() }), conversation);
      expectTheConversation(await diarizer.diarize(conversation.samples, { signal: signal() }), conversation);
    } finally {
      await diarizer.close();
    }
  });
});
