import { BACKOFF_MAX_MS, MAX_QUICK_RESTARTS, restartDelay, STABLE_AFTER_MS } from '../src/backoff';

describe('restart backoff', () => {
  it.each([
    [0, 1_000, 500, 1],
    [1, 1_000, 1_000, 2],
    [2, 1_000, 2_000, 3],
    [5, 1_000, 16_000, 6],
    [6, 1_000, BACKOFF_MAX_MS, 7],
    [40, 1_000, BACKOFF_MAX_MS, 41],
    [9, STABLE_AFTER_MS, 500, 1],
    [9, STABLE_AFTER_MS - 1, BACKOFF_MAX_MS, 10],
  ])('attempt %i after %i ms up waits %i ms (next attempt %i)', (attempt, uptime, delay, next) => {
    expect(restartDelay(attempt, uptime)).toMatchObject({ delayMs: delay, nextAttempt: next });
  });

  it.each([
    [0, 1_000, false],
    [MAX_QUICK_RESTARTS - 1, 1_000, false],
    [MAX_QUICK_RESTARTS, 1_000, true],
    [40, 1_000, true],
    [40, STABLE_AFTER_MS, false],
  ])('after crash %i of a child up %i ms gives up: %s', (attempt, uptime, giveUp) => {
    expect(restartDelay(attempt, uptime).giveUp).toBe(giveUp);
  });
});
