import { seededRandom } from '@murmur/kit';
import { frameRms, planChunks, SilenceChunker, type ChunkRange } from '../src/chunker';
import { BYTES_PER_SECOND } from '../src/pcm';

/** Synthetic "speech": a loud 440 Hz tone; pauses are digital silence or a low hiss. */
function tone(seconds: number, amplitude = 8000): Buffer {
  const samples = Math.round(seconds * 16_000);
  const buf = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) buf.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 16_000)), i * 2);
  return buf;
}
const silence = (seconds: number) => Buffer.alloc(Math.round(seconds * 16_000) * 2);

/** Builds PCM from [kind, seconds] parts. */
function pcm(parts: Array<['speech' | 'pause' | 'hiss', number]>): Buffer {
  return Buffer.concat(parts.map(([kind, s]) => (kind === 'speech' ? tone(s) : kind === 'hiss' ? tone(s, 200) : silence(s))));
}

const seconds = (chunks: ChunkRange[]) => chunks.map((c) => [c.startByte / BYTES_PER_SECOND, c.endByte / BYTES_PER_SECOND]);

describe('frameRms', () => {
  it.each([
    ['silence', silence(0.02), 0],
    ['a constant 1000', Buffer.from(new Int16Array(320).fill(1000).buffer), 1000],
    ['a constant -1000', Buffer.from(new Int16Array(320).fill(-1000).buffer), 1000],
    ['an empty frame', Buffer.alloc(0), 0],
  ])('is the RMS of %s', (_name, frame, rms) => {
    expect(frameRms(frame)).toBeCloseTo(rms, 6);
  });

  it('reads unaligned frames the same as aligned ones', () => {
    const data = Buffer.concat([Buffer.alloc(1), tone(0.02)]);
    expect(frameRms(data.subarray(1))).toBeCloseTo(frameRms(tone(0.02)), 6);
  });
});

describe('planChunks', () => {
  it.each<[string, Buffer, number[][]]>([
    ['no audio → no chunk', Buffer.alloc(0), []],
    ['10 s → one chunk', pcm([['speech', 10]]), [[0, 10]]],
    ['exactly 30 s → one chunk', pcm([['speech', 30]]), [[0, 30]]],
    ['30 s and one sample, no pause → cut at the limit', Buffer.concat([tone(30), Buffer.alloc(2)]), [[0, 30], [30, 30.0000625]]],
    ['a pause at 27.0–27.4 s → cut inside it', pcm([['speech', 27], ['pause', 0.4], ['speech', 12.6]]), [[0, 27.2], [27.2, 40]]],
    ['a pause before the search window is not used', pcm([['speech', 20], ['pause', 0.4], ['speech', 19.6]]), [[0, 30], [30, 40]]],
    ['the quieter of two pauses wins', pcm([['speech', 25.5], ['hiss', 0.4], ['speech', 2], ['pause', 0.4], ['speech', 11.7]]), [[0, 28.1], [28.1, 40]]],
    ['of two equally silent pauses the later wins', pcm([['speech', 25.5], ['pause', 0.4], ['speech', 2], ['pause', 0.4], ['speech', 11.7]]), [[0, 28.1], [28.1, 40]]],
    ['65 s with pauses every 14 s → cut in a pause, then at the limit when the window has none', pcm([['speech', 14], ['pause', 0.5], ['speech', 13.5], ['pause', 0.5], ['speech', 14], ['pause', 0.5], ['speech', 22]]), [[0, 28.25], [28.25, 58.25], [58.25, 65]]],
  ])('%s', (_name, audio, expected) => {
    const got = seconds(planChunks(audio));
    expect(got.length).toBe(expected.length);
    got.forEach(([start, end], i) => {
      expect(start).toBeCloseTo(expected[i]![0]!, 1);
      expect(end).toBeCloseTo(expected[i]![1]!, 1);
    });
  });

  it('gives the same plan whatever the block sizes', () => {
    const audio = pcm([['speech', 27], ['pause', 0.4], ['speech', 8]]);
    const whole = planChunks(audio);
    expect(whole).toHaveLength(2);
    for (const size of [7, 333, 4096, 65_537]) {
      const chunker = new SilenceChunker();
      const got: ChunkRange[] = [];
      for (let i = 0; i < audio.length; i += size) got.push(...chunker.push(audio.subarray(i, i + size)));
      got.push(...chunker.finish());
      expect(got).toEqual(whole);
    }
  });

  it('reports the loudest frame of each chunk: 0 for digital silence', () => {
    const audio = pcm([['pause', 29], ['pause', 0.5], ['speech', 10], ['pause', 25], ['hiss', 1]]);
    const got = planChunks(audio);
    expect(got.map((c) => c.endByte - c.startByte).reduce((a, b) => a + b, 0)).toBe(audio.length);
    const peaks = got.map((c) => c.peakRms);
    expect(peaks[0]).toBe(0);
    // A 8000-amplitude sine has an RMS of 8000/√2 ≈ 5657 over whole periods; a frame cut mid-period varies by ~1 %.
    expect(Math.abs(Math.max(...peaks) - 8000 / Math.SQRT2)).toBeLessThan(0.02 * 5657);
    expect(peaks[peaks.length - 1]).toBeGreaterThan(100);
    expect(peaks[peaks.length - 1]).toBeLessThan(200);
  });

  it('honours a shorter limit and search window', () => {
    const audio = pcm([['speech', 8], ['pause', 0.4], ['speech', 5]]);
    const got = seconds(planChunks(audio, { maxChunkSeconds: 10, searchSeconds: 3 }));
    expect(got).toHaveLength(2);
    expect(got[0]![1]).toBeCloseTo(8.2, 1);
    expect(got[1]![1]).toBeCloseTo(13.4, 1);
  });
});

describe('SilenceChunker on two hours of audio, streamed', () => {
  it('cuts 2 h into contiguous chunks of at most 30 s, in the pauses, holding only one window of energies', () => {
    // Deterministic "speech" with a pause of 0.3–0.8 s every 2–4.5 s; blocks of 64 KiB are
    // generated on the fly, so neither the test nor the chunker ever holds the whole audio.
    const random = seededRandom(42);
    const loud = tone(1);
    const quiet = silence(1);
    const total = 2 * 60 * 60 * BYTES_PER_SECOND;
    const pauses: Array<[number, number]> = [];
    const chunker = new SilenceChunker();
    const chunks: ChunkRange[] = [];
    let position = 0;
    let maxBuffered = 0;
    let nextPause = Math.round((2 + random() * 2.5) * 16_000) * 2;
    let pauseEnd = -1;
    while (position < total) {
      const block = Buffer.alloc(Math.min(64 * 1024, total - position));
      for (let i = 0; i < block.length; ) {
        const at = position + i;
        if (at >= pauseEnd && at >= nextPause) {
          const length = Math.round((0.3 + random() * 0.5) * 16_000) * 2;
          pauses.push([nextPause, nextPause + length]);
          pauseEnd = nextPause + length;
          nextPause = pauseEnd + Math.round((2 + random() * 2.5) * 16_000) * 2;
        }
        const inPause = at < pauseEnd;
        const until = Math.min(block.length, (inPause ? pauseEnd : nextPause) - position);
        const source = inPause ? quiet : loud;
        for (let j = i; j < until; j += source.length) source.copy(block, j, 0, Math.min(source.length, until - j));
        i = until;
      }
      chunks.push(...chunker.push(block));
      maxBuffered = Math.max(maxBuffered, chunker.bufferedFrames);
      position += block.length;
    }
    chunks.push(...chunker.finish());

    expect(maxBuffered).toBeLessThanOrEqual(chunker.maxFrames + 3);
    expect(chunks[0]!.startByte).toBe(0);
    expect(chunks[chunks.length - 1]!.endByte).toBe(total);
    let pauseIndex = 0;
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.endByte - chunk.startByte).toBeLessThanOrEqual(30 * BYTES_PER_SECOND);
      expect(chunk.endByte - chunk.startByte).toBeGreaterThan(i === chunks.length - 1 ? 0 : 25 * BYTES_PER_SECOND - 1);
      if (i > 0) expect(chunk.startByte).toBe(chunks[i - 1]!.endByte);
      if (i === chunks.length - 1) continue;
      // Every cut lies inside a pause (there is always one in the last 5 s before the limit).
      const cut = chunk.endByte;
      while (pauses[pauseIndex] && pauses[pauseIndex]![1] < cut) pauseIndex++;
      const pause = pauses[pauseIndex]!;
      expect(cut).toBeGreaterThanOrEqual(pause[0]);
      expect(cut).toBeLessThanOrEqual(pause[1]);
    }
    expect(chunks.length).toBeGreaterThanOrEqual(240);
    expect(chunks.length).toBeLessThanOrEqual(7200 / 25 + 1);
  });
});
