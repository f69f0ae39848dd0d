/** Polls `read` until `check` holds (a read that throws counts as not yet); the limit only catches a hang. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, limitMs = 240_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not after ${limitMs} ms (last: ${JSON.stringify(value)?.slice(0, 400)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
