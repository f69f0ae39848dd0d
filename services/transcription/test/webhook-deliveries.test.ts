/**
 * Issue 36: every webhook attempt is kept, and ListWebhookDeliveries pages them — on a real
 * Postgres (DATABASE_URL) and on the embedded PGlite alike, on the service's real schema. The
 * transcription service runs with its jobs but without a worker; the test drives each attempt
 * itself (the queue handler, `Webhooks.deliver`, over the same database and queue), so every
 * attempt is awaited, never waited for, and reads the list over gRPC as the app's admin and as
 * a developer. A receiver on loopback answers 500 (slowly) and then 204.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, createLogger, DEFAULT_OUTBOUND_POLICY, newId, newRequestId, runWithContext, type Database, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, failure, openTestDatabase, testAccess, testMinter } from '@murmur/kit/testing';
import { transcription } from '@murmur/proto';
import { CallerLimits, MemoryLeaseSet } from '../src/caller-limits';
import { FileAudioStore } from '../src/jobs/audio-store';
import { JobStore } from '../src/jobs/job-store';
import { DEFAULT_QUEUE_SETTINGS, JobQueue } from '../src/jobs/queue';
import { startTranscriptionService, TRANSCRIPTION_MIGRATIONS_DIR, type BillingPort, type RunningTranscriptionService } from '../src/index';
import type { LibraryPort } from '../src/saving';
import type { SpeechEngine } from '../src/engines/engine';
import { newSecretKeyEntry, SecretSealer } from '../src/webhooks/secret-keys';
import { MAX_KEPT_ROUNDS } from '../src/webhooks/delivery-store';
import { Webhooks } from '../src/webhooks/webhooks';
import { tempDir } from './fixtures';

jest.setTimeout(120_000);

const BACKENDS: Array<[string, string]> = process.env.DATABASE_URL ? [['postgres', process.env.DATABASE_URL], ['pglite', '']] : [['pglite', '']];
const CURSOR_SECRET = 'webhook-deliveries-test-cursor-secret';
const { WEBHOOK_STATE_PENDING, WEBHOOK_STATE_DELIVERED, WEBHOOK_STATE_FAILED } = transcription.WebhookState;
/** How long the receiver takes to answer its 500s: the first attempt's latency is at least this. */
const SLOW_MS = 60;
/** In the 500's body: it must never reach an attempt's record. */
const ANSWER_BODY = 'receiver-body-that-must-not-be-stored';

/** Whatever these tests never call (no job runs: there is no worker). */
function unused<T>(): T {
  return new Proxy({}, { get: () => () => Promise.reject(new Error('not called in these tests')) }) as T;
}

describe.each(BACKENDS)('webhook deliveries and their attempts on %s', (_name, url) => {
  let db: Database;
  let service: RunningTranscriptionService;
  let admin: PromiseClient<transcription.TranscriptionServiceClient>;
  let asGateway: PromiseClient<transcription.TranscriptionServiceClient>;
  let queue: JobQueue;
  let store: JobStore;
  let webhooks: Webhooks;
  let receiver: http.Server;
  let base = '';
  let audio: Awaited<ReturnType<typeof tempDir>>;
  const calls = new Map<string, number>();

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const n = (calls.get(req.url!) ?? 0) + 1;
        calls.set(req.url!, n);
        if (req.url!.startsWith('/flaky') && n === 1) return void setTimeout(() => res.writeHead(500).end(ANSWER_BODY), SLOW_MS);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    const log = createLogger('webhook-deliveries-test', process.env.TEST_LOG_LEVEL ?? 'silent');
    db = await openTestDatabase('transcription', TRANSCRIPTION_MIGRATIONS_DIR, url, ['_queue']);
    audio = await tempDir('murmur-deliveries-audio-');
    const sealer = SecretSealer.fromText(newSecretKeyEntry('test'));
    const webhookOptions = { policy: { ...DEFAULT_OUTBOUND_POLICY, allowCidrs: ['127.0.0.1/32'], ports: [80, 443, port] }, allowHttp: true, retrySeconds: [60, 60] };
    const engine: SpeechEngine = { name: 'none', model: 'none', recognize: () => Promise.reject(new Error('not called in these tests')) };
    service = await startTranscriptionService({
      access: testAccess('transcription'),
      log,
      address: '127.0.0.1:0',
      billing: unused<BillingPort>(),
      engine,
      jobs: {
        db,
        audio: await FileAudioStore.open(audio.dir),
        library: unused<LibraryPort>(),
        cursorSecret: CURSOR_SECRET,
        work: false,
        webhookSecrets: sealer,
        webhooks: webhookOptions,
      },
    });
    const address = `127.0.0.1:${service.port}`;
    admin = createPolicyClient(transcription.TranscriptionServiceClient, address, { deadlineMs: 30_000 });
    asGateway = createClient(transcription.TranscriptionServiceClient, address, { deadlineMs: 30_000, identity: testMinter('gateway') });
    // The queue's handler, over the same database and queue: what a worker replica runs.
    queue = await JobQueue.open(db, DEFAULT_QUEUE_SETTINGS, log);
    webhooks = new Webhooks(db, queue, log, { ...webhookOptions, sealer, limits: new CallerLimits(new MemoryLeaseSet()), cursorSecret: CURSOR_SECRET });
    store = new JobStore(db, (tx, row) => webhooks.onJobEnded(tx, row));
    webhooks.store = store;
  });

  afterAll(async () => {
    admin?.close();
    asGateway?.close();
    await service?.stop();
    await queue?.stop();
    await db?.close();
    await audio?.remove();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  /** A new owner with a signing secret. */
  async function newOwner(): Promise<string> {
    const owner = newId('usr');
    await webhooks.rotateSecret(owner);
    return owner;
  }

  /** A job of `owner` that ended (canceled) with `endpoint`: its delivery's id and the job's. */
  async function endedJob(owner: string, endpoint: string): Promise<{ id: string; jobId: string }> {
    const jobId = newId('trn');
    await store.transactionalInsert((tx) =>
      store.insert(tx, {
        id: jobId,
        owner_id: owner,
        idempotency_key: newId('idem'),
        language: '',
        filename: 'note.wav',
        content_type: 'audio/wav',
        save: false,
        title: '',
        folder_id: '',
        audio_key: null,
        upload_bytes: 0,
        duration_seconds: 1,
        reservation_id: '',
        credits_reserved: 0,
        webhook_url: endpoint,
        request_fingerprint: null,
        timeline_options: {},
      }),
    );
    const ended = await store.finish(jobId, async () => ({ status: 'canceled', holdOpen: false }));
    return { id: ended!.webhook!.id, jobId };
  }

  const list = (ownerId: string, more: Partial<transcription.ListWebhookDeliveriesRequest> = {}) =>
    admin.listWebhookDeliveries(transcription.ListWebhookDeliveriesRequest.fromPartial({ ownerId, ...more }));

  it('keeps a failing attempt and then a succeeding one, each with its code and latency, on the delivery it belongs to', async () => {
    const owner = await newOwner();
    const endpoint = `${base}/flaky-${owner}`;
    const { id, jobId } = await endedJob(owner, endpoint);
    const before = Date.now();

    await webhooks.deliver(id);
    let [d] = (await list(owner)).deliveries;
    expect(d).toMatchObject({ id, jobId, event: 'transcription.canceled', url: endpoint, state: WEBHOOK_STATE_PENDING, attemptCount: 1, lastStatusCode: 500 });
    expect(d!.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() + 30_000);
    expect(d!.attempts).toEqual([{ startedAt: expect.any(Date), round: 1, attempt: 1, statusCode: 500, latencyMs: expect.any(Number), error: 'the endpoint answered HTTP 500' }]);
    expect(d!.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(SLOW_MS - 5);
    expect(d!.attempts[0]!.startedAt!.getTime()).toBeGreaterThanOrEqual(before - 5);

    await webhooks.deliver(id);
    [d] = (await list(owner)).deliveries;
    expect(d).toMatchObject({ id, state: WEBHOOK_STATE_DELIVERED, attemptCount: 2, lastStatusCode: 204, nextAttemptAt: undefined });
    expect(d!.deliveredAt).toBeInstanceOf(Date);
    expect(d!.attempts.map((a) => [a.round, a.attempt, a.statusCode, a.error])).toEqual([
      [1, 1, 500, 'the endpoint answered HTTP 500'],
      [1, 2, 204, ''],
    ]);
    const [first, second] = d!.attempts;
    expect(second!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(second!.latencyMs).toBeLessThan(first!.latencyMs + 10_000);
    expect(second!.startedAt!.getTime()).toBeGreaterThanOrEqual(first!.startedAt!.getTime() + first!.latencyMs - 5);
    expect(calls.get(`/flaky-${owner}`)).toBe(2);
    // What the endpoint answered in its body is nowhere in what is kept.
    const kept = await db.query(`SELECT * FROM webhook_attempts WHERE delivery_id = $1`, [id]);
    expect(kept).toHaveLength(2);
    expect(JSON.stringify(kept)).not.toContain(ANSWER_BODY);

    // A delivery already delivered takes no more attempts (the queue's stale entries do nothing).
    await webhooks.deliver(id);
    expect((await list(owner)).deliveries[0]!.attempts).toHaveLength(2);
  });

  it('records an endpoint refused at the attempt as status 0 with the reason, and the round ending failed', async () => {
    const owner = await newOwner();
    const { id } = await endedJob(owner, 'http://127.0.0.1:9/closed');
    for (let i = 0; i < 3; i++) await webhooks.deliver(id);
    const [d] = (await list(owner)).deliveries;
    expect(d).toMatchObject({ id, state: WEBHOOK_STATE_FAILED, attemptCount: 3, lastStatusCode: 0, nextAttemptAt: undefined });
    expect(d!.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
    expect(d!.attempts[0]!.error).toMatch(/^the endpoint .*port/);
  });

  it('numbers the attempts of a new round (RetryWebhook, as the app calls it) from 1 in round 2', async () => {
    const owner = await newOwner();
    const { id, jobId } = await endedJob(owner, `${base}/ok-${owner}`);
    await webhooks.deliver(id);
    const { job } = await admin.retryWebhook({ ownerId: owner, id: jobId });
    expect(job?.webhook?.state).toBe(WEBHOOK_STATE_PENDING);
    await webhooks.deliver(id);
    const [d] = (await list(owner)).deliveries;
    expect(d).toMatchObject({ state: WEBHOOK_STATE_DELIVERED, attemptCount: 2 });
    expect(d!.attempts.map((a) => [a.round, a.attempt, a.statusCode])).toEqual([
      [1, 1, 204],
      [2, 1, 204],
    ]);
  });

  it(`keeps the attempts of the last ${MAX_KEPT_ROUNDS} rounds when a delivery is sent again and again`, async () => {
    const owner = await newOwner();
    const { id, jobId } = await endedJob(owner, `${base}/ok-${owner}`);
    await webhooks.deliver(id);
    for (let round = 2; round <= MAX_KEPT_ROUNDS + 2; round++) {
      await webhooks.retry(owner, jobId);
      await webhooks.deliver(id);
    }
    const [d] = (await list(owner)).deliveries;
    expect(d!.attemptCount).toBe(MAX_KEPT_ROUNDS + 2);
    expect(d!.attempts.map((a) => a.round)).toEqual(Array.from({ length: MAX_KEPT_ROUNDS }, (_, i) => i + 3));
  });

  it("never lists another owner's deliveries: not by the owner's list, not by naming them, not with their cursor", async () => {
    const a = await newOwner();
    const b = await newOwner();
    const mine = [await endedJob(a, `${base}/ok-a`), await endedJob(a, `${base}/ok-a`)];
    const theirs = await endedJob(b, `${base}/ok-b`);
    await webhooks.deliver(theirs.id);
    const page = await list(a, { limit: 1 });
    expect(page.deliveries.map((d) => d.id)).toEqual([mine[1]!.id]);
    expect((await list(a)).deliveries.map((d) => d.id).sort()).toEqual(mine.map((d) => d.id).sort());
    expect((await list(b)).deliveries.map((d) => d.id)).toEqual([theirs.id]);
    // B's attempts stay B's: A's list carries none of them.
    expect((await list(a)).deliveries.flatMap((d) => d.attempts)).toEqual([]);

    // A developer (the gateway's assertion for B) naming A is refused as if A had nothing.
    const named = await failure(
      runWithContext({ requestId: newRequestId(), principal: { userId: b, keyId: 'key_test' } }, () =>
        asGateway.listWebhookDeliveries(transcription.ListWebhookDeliveriesRequest.fromPartial({ ownerId: a })),
      ),
    );
    expect(named.code).toBe('not_found');
    // With their own owner, B's own call lists B's.
    const own = await runWithContext({ requestId: newRequestId(), principal: { userId: b, keyId: 'key_test' } }, () =>
      asGateway.listWebhookDeliveries(transcription.ListWebhookDeliveriesRequest.fromPartial({ ownerId: b })),
    );
    expect(own.deliveries.map((d) => d.id)).toEqual([theirs.id]);
    // A's cursor does not walk B's list.
    expect(page.nextCursor).not.toBe('');
    const stolen = await failure(list(b, { cursor: page.nextCursor }));
    expect([stolen.code, stolen.param]).toEqual(['invalid_request', 'cursor']);
  });

  it('pages newest first with a cursor, filters by state, and refuses a cursor of other filters or a limit over 100', async () => {
    const owner = await newOwner();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await endedJob(owner, `${base}/ok-${owner}`)).id);
    await webhooks.deliver(made[1]!);
    await webhooks.deliver(made[3]!);

    const all = (await list(owner, { limit: 100 })).deliveries;
    expect(all.map((d) => d.id).sort()).toEqual([...made].sort());
    const newestFirst = [...all].sort((x, y) => y.createdAt!.getTime() - x.createdAt!.getTime() || (y.id < x.id ? -1 : 1));
    expect(all.map((d) => d.id)).toEqual(newestFirst.map((d) => d.id));

    const walked: string[] = [];
    const sizes: number[] = [];
    let cursor = '';
    do {
      const page = await list(owner, { limit: 2, cursor });
      walked.push(...page.deliveries.map((d) => d.id));
      sizes.push(page.deliveries.length);
      expect(page.hasMore).toBe(page.nextCursor !== '');
      cursor = page.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([2, 2, 1]);
    expect(walked).toEqual(all.map((d) => d.id));

    const delivered = await list(owner, { state: WEBHOOK_STATE_DELIVERED, limit: 1 });
    expect(delivered.deliveries.map((d) => d.id)).toEqual([all.find((d) => d.state === WEBHOOK_STATE_DELIVERED)!.id]);
    const rest = await list(owner, { state: WEBHOOK_STATE_DELIVERED, cursor: delivered.nextCursor });
    expect([...delivered.deliveries, ...rest.deliveries].map((d) => d.id).sort()).toEqual([made[1]!, made[3]!].sort());
    expect((await list(owner, { state: WEBHOOK_STATE_PENDING })).deliveries).toHaveLength(3);

    const otherFilter = await failure(list(owner, { cursor: delivered.nextCursor }));
    expect([otherFilter.code, otherFilter.param]).toEqual(['invalid_request', 'cursor']);
    const tooMany = await failure(list(owner, { limit: 101 }));
    expect([tooMany.code, tooMany.param]).toEqual(['invalid_request', 'limit']);
  });
});
