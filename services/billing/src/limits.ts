/**
 * Pure arithmetic of billing: billing periods and the sliding rate-limit window. No I/O and
 * no clock of its own, so every boundary (month lengths, leap years, year ends, the instant a
 * rate-limit slot frees) is pinned down by table tests.
 */

/** Length of the AI rate-limit window (DESIGN §5: "10 AI requests a minute"). */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** A billing period: `[start, end)`, both instants in UTC. */
export interface Period {
  start: Date;
  end: Date;
}

/**
 * The calendar month in UTC that contains `at`: from the first instant of that month up to
 * (excluding) the first instant of the next. Periods are calendar months rather than "30 days
 * from sign-up" so every user's allowance resets on the same, predictable date.
 */
export function periodContaining(at: Date): Period {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  // Date.UTC rolls month 12 over into January of the next year.
  return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

/** True once `now` has reached the end of the period (the end instant belongs to the next one). */
export function isPeriodOver(periodEnd: Date, now: Date): boolean {
  return now.getTime() >= periodEnd.getTime();
}

/**
 * How many period boundaries lie between a period that started at `periodStart` and `now`
 * (0 while still inside it). An account idle for three months crosses three boundaries, yet is
 * reset only once: there is no rollover, so the months in between leave no trace.
 */
export function periodsElapsed(periodStart: Date, now: Date): number {
  const months = (now.getUTCFullYear() - periodStart.getUTCFullYear()) * 12 + (now.getUTCMonth() - periodStart.getUTCMonth());
  return Math.max(0, months);
}

/** `YYYY-MM` of the period starting at `periodStart`, for ledger notes. */
export function periodLabel(periodStart: Date): string {
  return periodStart.toISOString().slice(0, 7);
}

/** What a sliding window says about one user right now. */
export interface WindowState {
  limit: number;
  remaining: number;
  windowSeconds: number;
  /** Whole seconds until a slot frees (rounded up, so waiting that long always suffices); 0 when one is free. */
  resetSeconds: number;
}

/**
 * Which hit of a full window frees the next slot: 0-based, oldest first, among the `count` hits
 * still in the window. It is the very oldest unless the limit was lowered while hits were in the
 * window, in which case the count must drop to `limit - 1` first.
 */
export function freeingHitIndex(count: number, limit: number): number {
  return Math.max(0, count - limit);
}

/**
 * The state of a sliding-window log holding `count` hits later than `nowMs - windowMs`. A hit
 * at `t` occupies its slot until `t + windowMs` exactly. `freeingHitMs` is the time of the hit
 * at {@link freeingHitIndex} (needed only when the window is full).
 *
 * Both rate limiters (Redis and in-process) feed their raw numbers through this one function,
 * so they cannot disagree on what they report.
 */
export function windowState(count: number, freeingHitMs: number | undefined, nowMs: number, limit: number, windowSeconds: number): WindowState {
  const remaining = Math.max(0, limit - count);
  let resetSeconds = 0;
  if (remaining === 0) {
    resetSeconds =
      freeingHitMs === undefined ? windowSeconds : Math.max(1, Math.ceil((freeingHitMs + windowSeconds * 1000 - nowMs) / 1000));
  }
  return { limit, remaining, windowSeconds, resetSeconds };
}
