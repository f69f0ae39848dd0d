/**
 * Transcription jobs against real process deaths (issue 13's fault tests). The whole stack runs
 * as child processes under the launcher's Supervisor (which restarts a killed child as
 * `npm start` does), with heartbeats of 10 s (pg-boss's least) and a supervisor pass every
 * second, so a dead worker's job is taken back within seconds, and pocketsphinx chunks of at
 * most 30 s, so a minute of speech is several chunks (with the default 90 s, a two-minute file
 * was needed, and recognising it was most of this file's time):
 *  - kill -9 of the transcription process mid-job: the restarted process resumes the job from
 *    its recorded chunks, it completes with one charge, and its audio is deleted;
 *  - the whole system stopped and started again with jobs queued and running: all complete;
 *  - two transcription replicas on one Postgres drain 8 jobs, no job ever run by two at once.
 * The first two share one stack (each with a user of its own, one start-up fewer); the replicas
 * get a stack of their own.
 * Jobs live in Postgres: a cluster of this test's own where one can run (CI), else each child's
 * embedded PGlite; the two-replica case needs the shared cluster, and without one it fails in CI
 * and is skipped elsewhere with the reason printed (itIfReal) — it never passes without it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { itIfReal, startTestPostgres, testPostgresUnavailable, type TestPostgres } from '@murmur/kit/testing';
import { admin } from '@murmur/app';
import type { billing } from '@murmur/proto';
import { startProcessStack, type ProcessStack } from './support/process-stack';
import { eventually } from './support/eventually';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';
const JOB_ENV = {
  MURMUR_JOB_HEARTBEAT_SECONDS: '10',
  MURMUR_JOB_SUPERVISE_SECONDS: '1',
  MURMUR_TRANSCRIBE_CONCURRENCY: '1',
  MURMUR_POCKETSPHINX_MAX_CHUNK_SECONDS: '30',
  LOG_LEVEL: 'info',
};

type Json = Record<string, any>;

interface Fixture {
  stack: ProcessStack;
  key: string;
  userId: string;
  lines: string[];
}

type Stack = Pick<Fixture, 'stack' | 'lines'>;

async function startStack(opts: { pg?: TestPostgres; replicas?: number } = {}): Promise<Stack> {
  const lines: string[] = [];
  const stack = await startProcessStack({
    env: { ...JOB_ENV, ...(opts.pg ? { DATABASE_URL: opts.pg.url } : {}) },
    out: (line) => lines.push(line),
    transcriptionReplicas: opts.replicas ?? 0,
  });
  return { stack, lines };
}

/** A user of their own (credits, key) on `on`: each test's jobs, charges and log lines are told apart by it. */
async function setUp(email: string, on: Stack): Promise<Fixture> {
  const { stack } = on;
  const user = await admin.createUser(stack.clients, email, 'Jobs', 'pro');
  await admin.grantCredits(stack.clients, email, 500);
  const key = (await admin.createKey(stack.clients, email, '90')).key;
  return { ...on, key, userId: user.id };
}

async function submit(f: Fixture, file: string): Promise<Json> {
  const form = new FormData();
  form.append('audio', new Blob([fs.readFileSync(file)], { type: 'audio/wav' }), path.basename(file));
  const res = await fetch(`${f.stack.base}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${f.key}` }, body: form, signal: AbortSignal.timeout(60_000) });
  const body = (await res.json()) as Json;
  expect(res.status).toBe(202);
  return body;
}

async function job(f: Fixture, id: string): Promise<Json> {
  const res = await fetch(`${f.stack.base}/api/v1/transcriptions/${id}`, { headers: { authorization: `Bearer ${f.key}` }, signal: AbortSignal.timeout(20_000) });
  return (await res.json()) as Json;
}

/** The job's log lines (JSON lines of pino) with `msg` from every transcription replica. */
function logged(f: Fixture, msg: string): Array<Json & { replica: string }> {
  const out: Array<Json & { replica: string }> = [];
  for (const line of f.lines) {
    const m = /^\[(transcription[-\d]*)\s*\] (\{.*\})$/.exec(line);
    if (!m) continue;
    try {
      const entry = JSON.parse(m[2]!) as Json;
      if (entry.msg === msg) out.push({ ...entry, replica: m[1]! });
    } catch {
      // not a log line
    }
  }
  return out;
}

async function ledger(f: Fixture): Promise<billing.LedgerEntry[]> {
  const entries: billing.LedgerEntry[] = [];
  let pageToken = '';
  do {
    const page = await f.stack.clients.billing.listLedgerEntries({ userId: f.userId, pageSize: 100, pageToken });
    entries.push(...page.entries);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return entries;
}

/** Every job charged exactly once, nothing held. */
async function expectChargedOnce(f: Fixture, jobs: number): Promise<void> {
  const entries = await ledger(f);
  const count = (kind: string) => entries.filter((e) => e.kind === kind).length;
  expect(count('commit')).toBe(jobs);
  expect(count('reserve')).toBe(count('commit') + count('release') + count('expire'));
  expect((await f.stack.clients.billing.getUsage({ userId: f.userId })).usage!.creditsReserved).toBe(0);
}

/** Why no Postgres cluster of the test's own can run here (the replicas need one), or undefined. */
const clusterMissing = testPostgresUnavailable();

const audioLeft = (f: Fixture) => fs.readdirSync(path.join(f.stack.dataDir, 'transcription-audio'));

describe('transcription jobs through process deaths', () => {
  let pg: TestPostgres | undefined;
  let longWav: string;
  let dir: string;

  beforeAll(async () => {
    if (!clusterMissing) pg = await startTestPostgres();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-jobs-faults-'));
    // Just under a minute of speech (one credit): the librivox sentence over and over, two 30 s chunks or more.
    longWav = path.join(dir, 'one-minute.wav');
    execFileSync('ffmpeg', ['-nostdin', '-loglevel', 'error', '-stream_loop', '-1', '-i', WAV, '-t', '58', '-ac', '1', '-ar', '16000', longWav]);
  }, 120_000);

  afterAll(async () => {
    await pg?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The kill and the restart share one stack (one start-up fewer), stopped before the replicas start theirs on the same Postgres. */
  describe('on one stack', () => {
    let single: Stack | undefined;
    const singleStack = async () => (single ??= await startStack(pg ? { pg } : {}));
    afterAll(async () => {
      await single?.stack.stop();
    });

    it('kill -9 of the worker mid-job: the restarted worker resumes from the recorded chunks; completed, charged once, audio deleted', async () => {
      const f = await setUp('jobs-kill@example.com', await singleStack());
      const { id } = await submit(f, longWav);
      const before = await eventually(() => job(f, id), (j) => j.processed_seconds > 0, 'the job recorded a chunk');
      const pid = f.stack.supervisor.pid('transcription')!;
      process.kill(pid, 'SIGKILL');
      const done = await eventually(() => job(f, id), (j) => j.status === 'completed' || j.status === 'failed', 'the job ended');
      expect(done).toMatchObject({ status: 'completed', progress: 1, error: null, credits_charged: 1 });
      expect(done.text.split(' ').length).toBeGreaterThan(100);
      // The second attempt started from the chunks the first had recorded, not from the beginning.
      const resumed = logged(f, 'transcription job resumed').filter((l) => l.job_id === id);
      expect(resumed).toHaveLength(1);
      expect(resumed[0]!.chunks).toBeGreaterThanOrEqual(2);
      expect(resumed[0]!.chunks_done).toBeGreaterThan(0);
      expect(resumed[0]!.chunks_done).toBeLessThan(resumed[0]!.chunks);
      expect(resumed[0]!.chunks_done).toBeGreaterThanOrEqual(Math.floor((before.processed_seconds / before.duration_seconds) * resumed[0]!.chunks));
      await expectChargedOnce(f, 1);
      expect(audioLeft(f)).toEqual([]);
    }, 300_000);

    it('the whole system stopped and started again with jobs queued and running: every job completes, each charged once', async () => {
      const f = await setUp('jobs-restart@example.com', await singleStack());
      const ids = [(await submit(f, longWav)).id as string, (await submit(f, WAV)).id as string, (await submit(f, WAV)).id as string];
      await eventually(() => job(f, ids[0]!), (j) => j.processed_seconds > 0, 'the first job recorded a chunk');
      await f.stack.restart(2_000);
      for (const id of ids) {
        const done = await eventually(() => job(f, id), (j) => j.status === 'completed' || j.status === 'failed', `job ${id} ended`);
        expect(done).toMatchObject({ status: 'completed', error: null });
      }
      await expectChargedOnce(f, ids.length);
      expect(audioLeft(f)).toEqual([]);
    }, 300_000);
  });

  itIfReal(clusterMissing, 'two transcription replicas drain 8 jobs: both take work, no job is ever run by two at once, each charged once', async () => {
    const f = await setUp('jobs-replicas@example.com', await startStack({ pg: pg!, replicas: 1 }));
    try {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push((await submit(f, WAV)).id as string);
      for (const id of ids) await eventually(() => job(f, id), (j) => j.status === 'completed', `job ${id} completed`);
      const started = logged(f, 'transcription job started');
      const completed = logged(f, 'transcription job completed');
      for (const id of ids) {
        // One attempt each: nobody took a job another replica was running.
        expect(started.filter((l) => l.job_id === id)).toHaveLength(1);
        expect(completed.filter((l) => l.job_id === id)).toHaveLength(1);
      }
      expect(new Set(started.map((l) => l.replica)).size).toBe(2);
      await expectChargedOnce(f, ids.length);
      expect(audioLeft(f)).toEqual([]);
    } finally {
      await f.stack.stop();
    }
  }, 300_000);
});
