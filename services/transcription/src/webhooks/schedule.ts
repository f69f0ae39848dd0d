/**
 * When a webhook delivery is tried again: Standard Webhooks' suggested schedule — at once, then
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure: 8 attempts over 27.5 hours, so
 * a receiver down for a day loses nothing — each wait ±10 % at random (jitter: receivers coming
 * back are not hit by every sender in the same second).
 */
export const WEBHOOK_RETRY_SECONDS: readonly number[] = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];

/** Seconds until the attempt after `failedAttempts` failures of a round, or null when the round is over. */
export function nextAttemptDelay(failedAttempts: number, schedule: readonly number[] = WEBHOOK_RETRY_SECONDS, random: () => number = Math.random): number | null {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return null;
  return base * (0.9 + 0.2 * random());
}
