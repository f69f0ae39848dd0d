/** What the live recognizers' tests share: an event recorder and a feeder of PCM. */
import type { LiveEvent, LiveRecognizer } from '../src/live/live-events';
import { BYTES_PER_SECOND } from '../src/pcm';

/** Events as they come, and a way to wait for the next one of a type. */
export function recorder() {
  const events: LiveEvent[] = [];
  const waiting: Array<{ type: LiveEvent['type']; resolve(e: LiveEvent): void }> = [];
  return {
    events,
    onEvent(e: LiveEvent) {
      events.push(e);
      const i = waiting.findIndex((w) => w.type === e.type);
      if (i >= 0) waiting.splice(i, 1)[0]!.resolve(e);
    },
    /** The next event of `type` (one not seen yet). */
    next(type: LiveEvent['type']): Promise<LiveEvent> {
      return new Promise((resolve) => waiting.push({ type, resolve }));
    },
  };
}

/** Writes `pcm` in frames of `bytes` (100 ms by default), each once the recognizer took the last. */
export async function feed(rec: LiveRecognizer, pcm: Buffer, bytes = BYTES_PER_SECOND / 10): Promise<void> {
  for (let i = 0; i < pcm.length; i += bytes) await rec.write(pcm.subarray(i, i + bytes));
}
