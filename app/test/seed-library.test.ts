/**
 * seedLibrary against a real library service (gRPC over its Postgres): a seed stopped after any
 * number of writes — the last of them stored but its answer lost, as when `npm start` is killed —
 * and run again with the same options ends with exactly the plan, nothing missing and nothing
 * twice; run over a complete seed it writes nothing.
 */
import type { PromiseClient } from '@murmur/kit';
import type { library } from '@murmur/proto';
import { newOwner, startHarness, type Harness } from '../../services/library/test/harness';
import { buildSeedPlan } from '../src/seed/seed-content';
import { seedLibrary } from '../src/seed/seed-library';
import { librarySnapshot, plannedSnapshot } from './support/seed-snapshot';

type LibraryClient = PromiseClient<library.LibraryServiceClient>;

const WRITES = new Set(['createFolder', 'createRecording', 'addArtifact', 'createKnowledgeBase', 'addKnowledgeBaseRecording', 'createThoughtThread', 'addThreadItem', 'addThreadContextSource']);
/** The smallest plan with every kind of item: folders, recordings, artifacts, knowledge bases, threads. */
const OPTS = { recordings: 3, now: new Date('2026-01-10T08:00:00Z'), seed: 9 };

/**
 * The library client as a seed sees it, counting writes; with `stopAfter`, the write of that
 * number reaches the service and then fails, and every later one fails unsent. `settled()` waits
 * for the writes in flight (a parallel batch), as a dead process's calls end before it restarts.
 */
function countingClient(client: LibraryClient, stopAfter = Infinity) {
  let writes = 0;
  const inFlight: Promise<unknown>[] = [];
  const proxy = new Proxy(client, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      const call = (...args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      if (!WRITES.has(String(name))) return call;
      return async (...args: unknown[]) => {
        if (writes >= stopAfter) throw new Error('stopped');
        writes += 1;
        const sent = call(...args);
        inFlight.push(sent.catch(() => undefined));
        const res = await sent;
        if (writes >= stopAfter) throw new Error('stopped after the write was stored');
        return res;
      };
    },
  });
  return { client: proxy, writes: () => writes, settled: () => Promise.all(inFlight) };
}

describe('seedLibrary, stopped and run again', () => {
  let h: Harness;
  let total: number;
  const plan = buildSeedPlan(OPTS);

  beforeAll(async () => {
    h = await startHarness();
    const owner = newOwner();
    const counting = countingClient(h.client);
    await seedLibrary(counting.client, owner, OPTS);
    total = counting.writes();
    expect(await librarySnapshot(h.client, owner)).toEqual(plannedSnapshot(plan, owner, OPTS));
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('writes nothing over a complete seed', async () => {
    const owner = newOwner();
    await seedLibrary(h.client, owner, OPTS);
    const again = countingClient(h.client);
    await seedLibrary(again.client, owner, OPTS);
    expect(again.writes()).toBe(0);
    expect(await librarySnapshot(h.client, owner)).toEqual(plannedSnapshot(plan, owner, OPTS));
  });

  it('completes a seed stopped after any number of writes, with nothing twice', async () => {
    const stopAndResume = async (cut: number) => {
      const owner = newOwner();
      const stopped = countingClient(h.client, cut);
      await expect(seedLibrary(stopped.client, owner, OPTS)).rejects.toThrow(/stopped/);
      await stopped.settled();
      const resumed = countingClient(h.client);
      await seedLibrary(resumed.client, owner, OPTS);
      expect({ cut, library: await librarySnapshot(h.client, owner) }).toEqual({ cut, library: plannedSnapshot(plan, owner, OPTS) });
      // Exactly what was missing was written: every write sent before the stop was stored.
      expect({ cut, writes: resumed.writes() }).toEqual({ cut, writes: total - cut });
    };
    // Every write of the plan is a cut point once; owners apart, a few at a time.
    const cuts = Array.from({ length: total - 1 }, (_, i) => i + 1);
    for (let i = 0; i < cuts.length; i += 6) await Promise.all(cuts.slice(i, i + 6).map(stopAndResume));
  });

  it('plans anew without `now`: a second call adds a second library', async () => {
    const owner = newOwner();
    h.clock.advance(Math.max(0, Date.now() + 60_000 - h.clock.now().getTime())); // the service's now is after the seed's
    await seedLibrary(h.client, owner, { recordings: 3, seed: 1 });
    await seedLibrary(h.client, owner, { recordings: 3, seed: 1 });
    expect((await h.client.getLibraryStats({ ownerId: owner })).recordings).toBe(6);
  });
});
