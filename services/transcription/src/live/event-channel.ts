/**
 * Events from several sources (the recognizer's output, the session's own) read in order by one
 * async loop: `push` never blocks (a live stream's events are few and small: a handful a second),
 * `end` lets the reader finish, `fail` makes it throw once the events before are read.
 */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private ended = false;
  private error: { err: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(event: T): void {
    if (this.ended || this.error) return;
    this.queue.push(event);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(err: unknown): void {
    if (this.ended || this.error) return;
    this.error = { err };
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.error) throw this.error.err;
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
