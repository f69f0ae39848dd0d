/**
 * A seeded pseudo-random generator (mulberry32): reproducible sequences for generated content
 * (the admin seed), fuzzing and synthetic test data — a failing case replays from its seed.
 * Never for secrets or ids (those use node:crypto).
 */

/** Returns a function giving numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
