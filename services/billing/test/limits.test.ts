import { freeingHitIndex, isPeriodOver, periodContaining, periodLabel, periodsElapsed, windowState } from '../src/limits';

describe('billing periods (calendar months in UTC)', () => {
  it.each([
    ['mid-January', '2026-01-15T12:00:00Z', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['the first instant of a month belongs to it', '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['the last millisecond of a month belongs to it', '2026-03-31T23:59:59.999Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['a 30-day month', '2026-04-30T10:00:00Z', '2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
    ['February of a common year (28 days)', '2026-02-28T23:00:00Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['February of a leap year (29 days)', '2028-02-29T12:00:00Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['February of a century leap year', '2000-02-29T00:00:00Z', '2000-02-01T00:00:00.000Z', '2000-03-01T00:00:00.000Z'],
    ['December rolls over into January of the next year', '2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['UTC, not local time: 23:30 at UTC-5 on Jan 31 is already February', '2026-01-31T23:30:00-05:00', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
  ])('%s', (_name, at, start, end) => {
    const period = periodContaining(new Date(at));
    expect(period.start.toISOString()).toBe(start);
    expect(period.end.toISOString()).toBe(end);
  });

  it.each([
    ['one millisecond before the end', '2026-01-31T23:59:59.999Z', false],
    ['exactly at the end', '2026-02-01T00:00:00.000Z', true],
    ['months later', '2026-05-20T00:00:00.000Z', true],
  ])('a January period, %s: over = %s', (_name, now, over) => {
    expect(isPeriodOver(new Date('2026-02-01T00:00:00Z'), new Date(now))).toBe(over);
  });

  it.each([
    ['still inside the period', '2026-01-01', '2026-01-31T23:59:59Z', 0],
    ['the next month', '2026-01-01', '2026-02-01T00:00:00Z', 1],
    ['idle for three months', '2026-01-01', '2026-04-10T08:00:00Z', 3],
    ['across a year end', '2026-11-01', '2027-02-03T00:00:00Z', 3],
    ['a clock behind the period', '2026-05-01', '2026-04-30T00:00:00Z', 0],
  ])('counts elapsed periods: %s', (_name, start, now, elapsed) => {
    expect(periodsElapsed(new Date(start), new Date(now))).toBe(elapsed);
  });

  it('labels a period by its month', () => {
    expect(periodLabel(new Date('2028-02-01T00:00:00Z'))).toBe('2028-02');
  });
});

describe('sliding-window arithmetic', () => {
  const T = 1_768_478_400_000; // 2026-01-15T12:00:00Z

  it.each([
    ['an empty window', 0, undefined, T, 10, { remaining: 10, resetSeconds: 0 }],
    ['one slot left', 9, undefined, T, 10, { remaining: 1, resetSeconds: 0 }],
    ['full: waits until the oldest hit is one window old', 10, T - 10_000, T, 10, { remaining: 0, resetSeconds: 50 }],
    ['full: a fraction of a second still to wait rounds up', 10, T - 59_001, T, 10, { remaining: 0, resetSeconds: 1 }],
    ['full: just filled, a whole window to wait', 10, T, T, 10, { remaining: 0, resetSeconds: 60 }],
    ['over a lowered limit: remaining never goes negative', 12, T - 30_000, T, 10, { remaining: 0, resetSeconds: 30 }],
  ])('%s', (_name, count, freeing, now, limit, expected) => {
    expect(windowState(count, freeing, now, limit, 60)).toEqual({ limit, windowSeconds: 60, ...expected });
  });

  it.each([
    [10, 10, 0],
    [12, 10, 2],
    [3, 10, 0],
  ])('with %i hits and a limit of %i, hit #%i (oldest first) frees the next slot', (count, limit, index) => {
    expect(freeingHitIndex(count, limit)).toBe(index);
  });
});
