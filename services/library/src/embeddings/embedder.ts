/**
 * Turns passages into vectors in the background (issue 34): passages are written without one (an
 * engine is a network call and never runs inside the write's transaction), and this worker fills
 * them a batch at a time, woken by every write and polling otherwise. An engine that fails is
 * retried with a growing pause; search meanwhile ranks the passages it has vectors for, and text
 * ranking never waits on it.
 */
import { untracedUnlessInCall, type Logger } from '@murmur/kit';
import type { EmbeddingsEngine } from './engine';
import type { VectorIndex } from './vector-index';

/** Passages sent to the engine in one request. */
export const EMBED_BATCH = 32;
/** The longest passage text sent (characters): passages are ≤ ~700 characters, this bounds a bad one. */
const MAX_TEXT = 4_000;

export interface Embedder {
  /** Something was written: look for passages without vectors now. */
  wake(): void;
  /** Resolves when no passage is waiting (tests and benchmarks wait for the index to catch up). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function startEmbedder(engine: EmbeddingsEngine, index: VectorIndex, log: Logger, opts: { pollMs?: number } = {}): Embedder {
  const pollMs = opts.pollMs ?? 5_000;
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  let idleWaiters: Array<() => void> = [];
  const controller = new AbortController();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopped) {
        woken = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        woken = false;
        resolve();
      }
      wakeUp = done;
    });
  // Background work: untraced (kit background-work.ts), every poll and batch.
  const loop = untracedUnlessInCall(async () => {
    const forgotten = await index.forgetOtherModels(engine.model).catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, 'could not clear the vectors of another embeddings model');
      return 0;
    });
    if (forgotten > 0) log.info({ passages: forgotten, model: engine.model }, 'the embeddings model changed; making the vectors again');
    let pause = 1_000;
    while (!stopped) {
      try {
        const batch = await index.pending(engine.model, EMBED_BATCH);
        if (batch.length === 0) {
          for (const w of idleWaiters) w();
          idleWaiters = [];
          await sleep(pollMs);
          continue;
        }
        const vectors = await engine.embed(batch.map((b) => b.text.slice(0, MAX_TEXT)), controller.signal);
        await index.store(engine.model, batch.map((b, i) => ({ id: b.id, vector: vectors[i]! })));
        pause = 1_000;
      } catch (err) {
        if (stopped) break;
        log.warn({ err: (err as Error).message, retry_ms: pause }, 'embedding passages failed; retrying');
        await sleep(pause);
        pause = Math.min(pause * 2, 60_000);
      }
    }
    for (const w of idleWaiters) w();
  });
  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        woken = true;
        wakeUp?.();
      });
    },
    async stop() {
      stopped = true;
      controller.abort();
      wakeUp?.();
      await loop;
    },
  };
}
