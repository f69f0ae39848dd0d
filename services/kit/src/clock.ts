/** Time as a dependency, so tests can cross expiries and period boundaries without waiting. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
