/**
 * A gate in front of the transcription engine: while it is closed, every recognition waits at it
 * (or stops, when its job is canceled), so a test holds a job at a known point — running, not
 * finished — instead of hoping a request lands before the engine is done.
 */
import type { SpeechEngine } from '@murmur/transcription';

export class EngineGate {
  private closed: { opened: Promise<void>; open: () => void } | undefined;
  private waiting = 0;
  private arrivals: Array<() => void> = [];

  /** `engine`, with every recognition passing this gate first. */
  wrap(engine: SpeechEngine): SpeechEngine {
    const recognize: SpeechEngine['recognize'] = async (wavPath, opts) => {
      await this.pass(opts.signal);
      return engine.recognize(wavPath, opts);
    };
    return new Proxy(engine, {
      get(target, prop) {
        if (prop === 'recognize') return recognize;
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** From now on, recognitions wait until `open()`. */
  close(): void {
    if (this.closed) return;
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    this.closed = { opened, open };
  }

  /** Lets every waiting and later recognition through. */
  open(): void {
    this.closed?.open();
    this.closed = undefined;
  }

  /** Resolves once a recognition waits at the closed gate (at once if one does). */
  reached(): Promise<void> {
    if (this.waiting > 0) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push(resolve));
  }

  private async pass(signal: AbortSignal): Promise<void> {
    const closed = this.closed;
    if (!closed) return;
    this.waiting += 1;
    for (const arrived of this.arrivals.splice(0)) arrived();
    try {
      await new Promise<void>((resolve, reject) => {
        const stop = () => reject(signal.reason instanceof Error ? signal.reason : new Error('recognition aborted'));
        if (signal.aborted) return stop();
        signal.addEventListener('abort', stop, { once: true });
        void closed.opened.then(() => {
          signal.removeEventListener('abort', stop);
          resolve();
        });
      });
    } finally {
      this.waiting -= 1;
    }
  }
}
