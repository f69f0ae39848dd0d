/**
 * Memory still referenced by this process: heap in use plus array buffers, after a forced full
 * collection — not RSS, which also holds garbage a busy machine has not collected yet. Upload
 * tests sample it every so many bytes sent (a handful of collections in all: collecting on a
 * timer slowed a full suite's worker past their limits).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
/** V8's collector, reachable without starting node with --expose-gc. */
const collectGarbage = runInNewContext('gc') as () => void;

export function retainedMemory(): number {
  collectGarbage();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
