import type { ChunkRange } from '../src/chunker';
import { BYTES_PER_SECOND } from '../src/pcm';
import { isSilent, PARTS_PER_WORKER, planRecognition, SILENT_PEAK_RMS } from '../src/plan';

/** Contiguous pieces of the given lengths (seconds); a negative length is a silent piece. */
function pieces(lengths: number[]): ChunkRange[] {
  const out: ChunkRange[] = [];
  let at = 0;
  for (const l of lengths) {
    const bytes = Math.round(Math.abs(l) * BYTES_PER_SECOND);
    out.push({ startByte: at, endByte: at + bytes, peakRms: l < 0 ? 0 : 4000 });
    at += bytes;
  }
  return out;
}
const secs = (c: ChunkRange) => (c.endByte - c.startByte) / BYTES_PER_SECOND;

describe('isSilent', () => {
  it.each([
    [0, true],
    [SILENT_PEAK_RMS - 0.01, true],
    [SILENT_PEAK_RMS, false],
    [3000, false],
  ])('peak RMS %d → %s', (peakRms, silent) => {
    expect(isSilent({ startByte: 0, endByte: 2, peakRms })).toBe(silent);
  });
});

describe('planRecognition', () => {
  it('gives a 30 s engine (Whisper) every audible piece as it is, silent ones dropped', () => {
    const input = pieces([28, 29, -30, 27, 12]);
    const got = planRecognition(input, { maxChunkSeconds: 30, concurrency: 2 });
    expect(got).toEqual([input[0], input[1], input[3], input[4]]);
  });

  it('plans nothing for a silent file', () => {
    expect(planRecognition(pieces([-30, -30, -4]), { maxChunkSeconds: 300, concurrency: 2 })).toEqual([]);
  });

  it('joins 10 minutes of pieces into PARTS_PER_WORKER runs per core of about equal length', () => {
    const got = planRecognition(pieces(Array.from({ length: 20 }, () => 29.75).concat([5])), { maxChunkSeconds: 300, concurrency: 2 });
    expect(got).toHaveLength(2 * PARTS_PER_WORKER);
    const lengths = got.map(secs);
    expect(Math.max(...lengths) - Math.min(...lengths)).toBeLessThanOrEqual(30);
    expect(lengths.reduce((a, b) => a + b, 0)).toBeCloseTo(600, 6);
  });

  it('splits 2 hours into a multiple of the cores, every run within the engine limit, covering all audio in order', () => {
    const input = pieces(Array.from({ length: 260 }, (_, i) => 25 + (i % 6)));
    for (const concurrency of [1, 2, 3, 8]) {
      const got = planRecognition(input, { maxChunkSeconds: 300, concurrency });
      for (const c of got) expect(secs(c)).toBeLessThanOrEqual(300);
      expect(got[0]!.startByte).toBe(0);
      for (let i = 1; i < got.length; i++) expect(got[i]!.startByte).toBe(got[i - 1]!.endByte);
      expect(got[got.length - 1]!.endByte).toBe(input[input.length - 1]!.endByte);
      // ceil(total / ((300 - 30) s × cores)) runs per core, never under PARTS_PER_WORKER.
      const total = input.reduce((a, c) => a + secs(c), 0);
      const perCore = Math.max(PARTS_PER_WORKER, Math.ceil(total / (270 * concurrency)));
      expect(got).toHaveLength(perCore * concurrency);
    }
  });

  it('never joins across a dropped silence', () => {
    // Audible total 240 s, one core → four runs of ~60 s; the first run is broken by the silence.
    const got = planRecognition(pieces([10, -30, 10, 30, 30, 30, 30, 30, 30, 30]), { maxChunkSeconds: 300, concurrency: 1 });
    expect(got.map((c) => [c.startByte / BYTES_PER_SECOND, c.endByte / BYTES_PER_SECOND])).toEqual([
      [0, 10],
      [40, 80],
      [80, 140],
      [140, 200],
      [200, 260],
    ]);
  });

  it('keeps the loudest peak of the pieces it joins', () => {
    const input = pieces(Array.from({ length: 8 }, () => 30));
    input[5]!.peakRms = 9000;
    const got = planRecognition(input, { maxChunkSeconds: 300, concurrency: 1 });
    expect(got).toHaveLength(4);
    expect(got.map((c) => c.peakRms)).toEqual([4000, 4000, 9000, 4000]);
  });
});
