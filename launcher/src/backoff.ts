/**
 * Restart delay of a crashed child: doubling from 500 ms to 30 s, back to the start after a
 * minute of healthy running. A child that crashes again after MAX_QUICK_RESTARTS quick restarts
 * (about 30 s of retries) is given up: one that cannot stay up a minute has a cause to fix, and
 * restarting it forever only hides that.
 */
export const BACKOFF_MIN_MS = 500;
export const BACKOFF_MAX_MS = 30_000;
export const STABLE_AFTER_MS = 60_000;
export const MAX_QUICK_RESTARTS = 6;

/** Delay before restart number `attempt` (0-based) of a child that ran `uptimeMs` before it died. */
export function restartDelay(attempt: number, uptimeMs: number): { delayMs: number; nextAttempt: number; giveUp: boolean } {
  const effective = uptimeMs >= STABLE_AFTER_MS ? 0 : attempt;
  const delayMs = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(effective, 16));
  return { delayMs, nextAttempt: effective + 1, giveUp: effective >= MAX_QUICK_RESTARTS };
}
