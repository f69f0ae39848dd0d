import { isoString } from '../src/operations/present';

describe('isoString (the public times of every shape)', () => {
  it('writes what Date.prototype.toISOString writes', () => {
    const edges = [
      0, -1, 1, 951_782_400_000 /* 2000-02-29 */, 4_107_542_399_999 /* 2100-02-28T23:59:59.999 */, 4_107_542_400_000, -62_167_219_200_000 /* 0000-01-01 */,
      -62_167_219_200_001, 253_402_300_799_999 /* 9999-12-31T23:59:59.999 */, 253_402_300_800_000, 8.64e15, -8.64e15, 1_800_000_000_123,
    ];
    for (const ms of edges) expect(isoString(ms)).toBe(new Date(ms).toISOString());
    // Every day of one 400-year cycle of the calendar (leap rules of 4, 100 and 400 years) and of
    // the four years before 1970, each at another time of day.
    for (let day = -1461; day <= 146_097; day += 1) {
      const ms = day * 86_400_000 + ((day * 7_919_993) % 86_400_000 + 86_400_000) % 86_400_000;
      const expected = new Date(ms).toISOString();
      if (isoString(ms) !== expected) expect(isoString(ms)).toBe(expected);
    }
  });

  it('leaves invalid times to toISOString (which throws)', () => {
    expect(() => isoString(Number.NaN)).toThrow(RangeError);
  });
});
