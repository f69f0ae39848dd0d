import {
  admissionRefusal,
  type Balance,
  conversionCredits,
  drawCredits,
  freeingHitIndex,
  isPeriodOver,
  periodContaining,
  periodLabel,
  periodsElapsed,
  settleHold,
  startOfNextUtcDay,
  transcriptionCredits,
  utcDays,
  windowState,
} from '../src/limits';

describe('UTC days (the Usage chart of GetUsageHistory)', () => {
  it.each<[string, string, string, string[]]>([
    ['one day: from and through the same day', '2026-03-01T00:00:00Z', '2026-03-01T23:59:59.999Z', ['2026-03-01']],
    ['a period start through mid-morning of the 3rd', '2026-03-01T00:00:00Z', '2026-03-03T09:00:00Z', ['2026-03-01', '2026-03-02', '2026-03-03']],
    ['a start inside its day counts that whole day', '2026-03-01T18:00:00Z', '2026-03-02T00:00:00Z', ['2026-03-01', '2026-03-02']],
    ['across a leap day', '2028-02-28T00:00:00Z', '2028-03-01T12:00:00Z', ['2028-02-28', '2028-02-29', '2028-03-01']],
    ['across a year end', '2026-12-31T00:00:00Z', '2027-01-01T00:00:00Z', ['2026-12-31', '2027-01-01']],
    ['UTC, not local time: 21:00 at UTC-5 on the 1st is the 2nd', '2026-03-01T00:00:00Z', '2026-03-01T21:00:00-05:00', ['2026-03-01', '2026-03-02']],
    ['none when through is earlier than the day of from', '2026-03-02T00:00:00Z', '2026-03-01T23:59:59.999Z', []],
  ])('%s', (_name, from, through, days) => {
    expect(utcDays(new Date(from), new Date(through))).toEqual(days);
  });

  it('lists all 31 days of a 31-day month', () => {
    const days = utcDays(new Date('2026-01-01T00:00:00Z'), new Date('2026-01-31T23:59:59.999Z'));
    expect([days.length, days[0], days[30]]).toEqual([31, '2026-01-01', '2026-01-31']);
  });

  it.each([
    ['mid-day', '2026-03-04T17:30:00Z', '2026-03-05T00:00:00.000Z'],
    ['the first instant of a day', '2026-03-04T00:00:00.000Z', '2026-03-05T00:00:00.000Z'],
    ['the last millisecond of a day', '2026-03-04T23:59:59.999Z', '2026-03-05T00:00:00.000Z'],
    ['the last day of a year', '2026-12-31T12:00:00Z', '2027-01-01T00:00:00.000Z'],
  ])('the day after %s starts at %s', (_name, at, next) => {
    expect(startOfNextUtcDay(new Date(at)).toISOString()).toBe(next);
  });
});

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
    ['two hits in: says when the oldest leaves the window', 2, T - 20_000, T, 10, { remaining: 8, resetSeconds: 40 }],
    ['one slot left', 9, T - 1_500, T, 10, { remaining: 1, resetSeconds: 59 }],
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

describe('prices (the in-app ones)', () => {
  it.each([
    ['zero seconds still ran the engine: one credit', 0, 1, 1],
    ['a fraction of a second', 0.2, 1, 1],
    ['exactly one minute', 60, 1, 1],
    ['a millisecond into the second minute', 60.001, 1, 2],
    ['an hour', 3_600, 1, 60],
    ['an hour and a second', 3_601, 1, 61],
    ['a plan charging 3 per minute', 150, 3, 9],
    ['a plan charging nothing still charges the one-credit minimum', 600, 0, 1],
  ])('transcription, %s: %d s at %d/min → %d credits', (_name, seconds, perMinute, credits) => {
    expect(transcriptionCredits(seconds, perMinute)).toBe(credits);
  });

  it.each([
    ['an empty transcript', 0, 1, 1],
    ['one character', 1, 1, 1],
    ['exactly 1,000 characters', 1_000, 1, 1],
    ['1,001 characters', 1_001, 1, 2],
    ['200,000 characters', 200_000, 1, 200],
    ['a plan charging 2 per 1,000', 2_500, 2, 6],
  ])('conversion, %s: %d chars at %d/1k → %d credits', (_name, chars, per1k, credits) => {
    expect(conversionCredits(chars, per1k)).toBe(credits);
  });
});

describe('drawing a charge (monthly first, then prepaid; all or nothing)', () => {
  const balance = (b: Partial<Balance>): Balance => ({ monthly: 0, prepaid: 0, spendCents: 0, capCents: 0, priceCents: 1, ...b });

  it.each<[string, Partial<Balance>, number, ReturnType<typeof drawCredits>]>([
    ['all from monthly', { monthly: 10 }, 4, { monthly: 4, prepaid: 0, spendCents: 0 }],
    ['the last monthly credit', { monthly: 1 }, 1, { monthly: 1, prepaid: 0, spendCents: 0 }],
    ['monthly spent first, the rest prepaid at its price', { monthly: 3, prepaid: 10, capCents: 100, priceCents: 2 }, 5, { monthly: 3, prepaid: 2, spendCents: 4 }],
    ['prepaid up to exactly the cap', { prepaid: 10, spendCents: 6, capCents: 10 }, 4, { monthly: 0, prepaid: 4, spendCents: 4 }],
    ['one credit past the cap', { prepaid: 10, spendCents: 6, capCents: 10 }, 5, 'spending_cap_reached'],
    ['a zero cap forbids any prepaid credit', { monthly: 2, prepaid: 10 }, 3, 'spending_cap_reached'],
    ['a zero cap does not matter while monthly covers it', { monthly: 2, prepaid: 10 }, 2, { monthly: 2, prepaid: 0, spendCents: 0 }],
    ['more than both balances hold', { monthly: 3, prepaid: 1, capCents: 1_000 }, 5, 'insufficient_tokens'],
    ['nothing at all', {}, 1, 'insufficient_tokens'],
    ['insufficient wins over the cap (the credits are not there anyway)', { monthly: 1, prepaid: 1 }, 5, 'insufficient_tokens'],
    ['spend already past a lowered cap', { prepaid: 5, spendCents: 50, capCents: 40 }, 1, 'spending_cap_reached'],
  ])('%s', (_name, b, credits, expected) => {
    expect(drawCredits(balance(b), credits)).toEqual(expected);
  });

  it.each<[string, Partial<Balance>, ReturnType<typeof admissionRefusal>]>([
    ['monthly left: admitted whatever the cap', { monthly: 1 }, undefined],
    ['nothing left', {}, 'insufficient_tokens'],
    ['prepaid left and room for one credit under the cap', { prepaid: 3, spendCents: 9, capCents: 10 }, undefined],
    ['prepaid left but the cap reached', { prepaid: 3, spendCents: 10, capCents: 10 }, 'spending_cap_reached'],
    ['prepaid left but the next credit costs more than the room left', { prepaid: 3, spendCents: 9, capCents: 10, priceCents: 2 }, 'spending_cap_reached'],
  ])('admission: %s', (_name, b, expected) => {
    expect(admissionRefusal(balance(b))).toBe(expected);
  });
});

describe('settling a hold (commit, release, expiry)', () => {
  // 10 credits held: 4 monthly, 6 prepaid at 2 cents (12 cents of spend).
  const hold = { monthly: 4, prepaid: 6, spendCents: 12 };

  it.each([
    ['commit in full: nothing returns', 10, true, { kept: hold, monthlyReturned: 0, prepaidReturned: 0, spendReturnedCents: 0, monthlyLapsed: 0 }],
    ['commit less: prepaid returns first, with its spend', 7, true, { kept: { monthly: 4, prepaid: 3, spendCents: 6 }, monthlyReturned: 0, prepaidReturned: 3, spendReturnedCents: 6, monthlyLapsed: 0 }],
    ['commit less than the monthly part: all prepaid, then monthly', 1, true, { kept: { monthly: 1, prepaid: 0, spendCents: 0 }, monthlyReturned: 3, prepaidReturned: 6, spendReturnedCents: 12, monthlyLapsed: 0 }],
    ['release (0) in the same period: everything back', 0, true, { kept: { monthly: 0, prepaid: 0, spendCents: 0 }, monthlyReturned: 4, prepaidReturned: 6, spendReturnedCents: 12, monthlyLapsed: 0 }],
    ['release after a reset: prepaid back, monthly lapsed, no spend refund', 0, false, { kept: { monthly: 0, prepaid: 0, spendCents: 0 }, monthlyReturned: 0, prepaidReturned: 6, spendReturnedCents: 0, monthlyLapsed: 4 }],
    ['commit less after a reset', 2, false, { kept: { monthly: 2, prepaid: 0, spendCents: 0 }, monthlyReturned: 0, prepaidReturned: 6, spendReturnedCents: 0, monthlyLapsed: 2 }],
  ])('%s', (_name, final, samePeriod, expected) => {
    expect(settleHold(hold, 2, final, samePeriod)).toEqual(expected);
  });

  it.each([11, -1, 1.5])('refuses a final amount of %d for a 10-credit hold', (final) => {
    expect(() => settleHold(hold, 2, final, true)).toThrow(RangeError);
  });
});
