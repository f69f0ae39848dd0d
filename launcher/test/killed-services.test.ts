/**
 * kill -9 of real service processes (issue 11 items 2 and 3). The whole stack runs as child
 * processes under the launcher's Supervisor, which restarts a killed child as `npm start` does;
 * credit holds are 2-second leases (MURMUR_HOLD_LEASE_SECONDS) so a dead holder's credits come
 * back within seconds. Each fault must answer 503 service_unavailable (never 500, never a hang),
 * hold nothing afterwards (credits, spool files), and the gateway must work again once the
 * process is back, without a restart of its own.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startTestPostgres, testPostgresUnavailable, type TestPostgres } from '@murmur/kit/testing';
import { admin } from '@murmur/app';
import type { billing } from '@murmur/proto';
import { startProcessStack, type ProcessName, type ProcessStack } from './support/process-stack';
import { connectLive, pcmOfWav } from '../../gateway/test/support/live-client';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';
const EMAIL = 'faults@example.com';
/** Only a limit that catches a hang; the answers themselves come in about a second. */
const HANG_MS = 20_000;

describe('killed service processes', () => {
  let stack: ProcessStack;
  let pg: TestPostgres | undefined;
  let key: string;
  let userId: string;
  let longWav: string;
  let spoolRoot: string;

  beforeAll(async () => {
    // A Postgres cluster of this test's own where we may run one (root, postgresql-common), the
    // embedded PGlite of each child otherwise.
    if (!testPostgresUnavailable()) pg = await startTestPostgres();
    const dataEnv = pg ? { DATABASE_URL: pg.url } : {};
    const spoolParent = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-spool-'));
    spoolRoot = path.join(spoolParent, 'murmur-transcription');
    stack = await startProcessStack({
      env: { ...dataEnv, MURMUR_HOLD_LEASE_SECONDS: '2', MURMUR_TRANSCRIBE_TMP_DIR: spoolParent, MURMUR_TRANSCRIBE_CONCURRENCY: '1' },
    });
    const user = await admin.createUser(stack.clients, EMAIL, 'Faults', 'pro');
    userId = user.id;
    await admin.grantCredits(stack.clients, EMAIL, 500);
    key = (await admin.createKey(stack.clients, EMAIL, '90')).key;
    // Five minutes of speech: the librivox sentence over and over.
    longWav = path.join(stack.dataDir, 'five-minutes.wav');
    execFileSync('ffmpeg', ['-nostdin', '-loglevel', 'error', '-stream_loop', '-1', '-i', WAV, '-t', '300', '-ac', '1', '-ar', '16000', longWav]);
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await pg?.drop();
  });

  const auth = () => ({ authorization: `Bearer ${key}` });
  const usage = async (): Promise<billing.Usage> => (await stack.clients.billing.getUsage({ userId })).usage!;

  /** AI calls answered 200: exactly these may be charged. */
  let delivered = 0;
  const counted = (res: Response) => {
    if (res.status === 200) delivered += 1;
    return res;
  };

  async function transcribe(file: string): Promise<Response> {
    const form = new FormData();
    form.append('audio', new Blob([fs.readFileSync(file)], { type: 'audio/wav' }), path.basename(file));
    return counted(await fetch(`${stack.base}/api/v1/transcribe`, { method: 'POST', headers: auth(), body: form, signal: AbortSignal.timeout(120_000) }));
  }

  async function convert(): Promise<Response> {
    return counted(
      await fetch(`${stack.base}/api/v1/convert`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ transcript: 'Marcus will send the deck by Friday. We agreed to ship in March.', kind: 'summary' }),
        signal: AbortSignal.timeout(HANG_MS),
      }),
    );
  }

  const read = (route: string) => fetch(`${stack.base}/api/v1${route}`, { headers: auth(), signal: AbortSignal.timeout(HANG_MS) });

  function kill(name: ProcessName): void {
    const pid = stack.supervisor.pid(name);
    if (pid === undefined) throw new Error(`${name} is not running`);
    process.kill(pid, 'SIGKILL');
  }

  /** Polls `check` until it holds (or the limit that only catches a hang passes). */
  async function eventually(check: () => Promise<boolean>, what: string, limitMs = HANG_MS, everyMs = 100): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`${what}: not after ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** The status and contract error code of an answer. */
  async function outcome(res: Response): Promise<{ status: number; code: string | undefined }> {
    const body = (await res.json().catch(() => ({}))) as { error?: { code?: string } };
    return { status: res.status, code: body.error?.code };
  }

  /** The ledger sums to the balances, nothing is held, and every commit is a call that answered 200. */
  async function expectReconciled(): Promise<void> {
    const u = await usage();
    const entries: billing.LedgerEntry[] = [];
    let pageToken = '';
    do {
      const page = await stack.clients.billing.listLedgerEntries({ userId, pageSize: 100, pageToken });
      entries.push(...page.entries);
      pageToken = page.nextPageToken;
    } while (pageToken);
    const sum = (f: (e: billing.LedgerEntry) => number) => entries.reduce((n, e) => n + f(e), 0);
    expect({ monthly: sum((e) => e.monthlyDelta), prepaid: sum((e) => e.prepaidDelta), reserved: 0 }).toEqual({
      monthly: u.monthlyCreditsRemaining,
      prepaid: u.prepaidCreditsRemaining,
      reserved: u.creditsReserved,
    });
    const count = (kind: string) => entries.filter((e) => e.kind === kind).length;
    expect(count('reserve')).toBe(count('commit') + count('release') + count('expire'));
    expect(count('commit')).toBe(delivered);
  }

  it('transcription killed 3 s into a 5-minute file: 503, the hold back within its lease, the spool removed by the restart', async () => {
    const before = await usage();
    const pending = transcribe(longWav);
    await eventually(async () => (await usage()).creditsReserved > 0, 'the transcription reserved credits', 60_000);
    const instances = fs.readdirSync(spoolRoot);
    expect(instances).toHaveLength(1);
    const killedSpool = path.join(spoolRoot, instances[0]!);
    expect(fs.readdirSync(killedSpool).filter((f) => f.startsWith('murmur-trn-'))).toHaveLength(1);

    kill('transcription');
    expect(await outcome(await pending)).toEqual({ status: 503, code: 'service_unavailable' });

    await stack.waitReady('transcription');
    await eventually(async () => !fs.existsSync(killedSpool), 'the restarted instance removed the dead one\'s spool');
    await eventually(async () => (await usage()).creditsReserved === 0, 'the dead holder\'s credits came back');
    const after = await usage();
    expect([after.monthlyCreditsRemaining, after.prepaidCreditsRemaining]).toEqual([before.monthlyCreditsRemaining, before.prepaidCreditsRemaining]);

    // The gateway's channel reconnected: a short file transcribes.
    const again = await transcribe(WAV);
    expect(again.status).toBe(200);
    await expectReconciled();
  }, 180_000);

  it('the gateway killed mid-transcription: the service sees the caller go and the hold comes back', async () => {
    const pending = transcribe(longWav).catch(() => undefined);
    await eventually(async () => (await usage()).creditsReserved > 0, 'the transcription reserved credits', 60_000);
    kill('gateway');
    await pending;
    await eventually(async () => (await usage()).creditsReserved === 0, 'the hold of the dead caller came back');
    await stack.waitReady('gateway');
    expect((await read('/usage')).status).toBe(200);
    await expectReconciled();
  }, 180_000);

  it('transcription killed mid-stream: the live client gets 4503 with the reason, and the hold comes back', async () => {
    const before = await usage();
    const live = await connectLive(stack.base, { key });
    await live.next('open');
    const speech = pcmOfWav(WAV);
    await live.stream(speech.subarray(0, speech.length / 2), { realTime: true });
    expect((await usage()).creditsReserved).toBeGreaterThan(0);
    kill('transcription');
    const closed = await live.closed;
    expect(closed).toEqual({ code: 4503, reason: 'service_unavailable' });
    expect(live.messages.at(-1)).toMatchObject({ type: 'error', error: { code: 'service_unavailable' } });
    // Nothing was committed by the dead process: its hold lapses and every credit comes back.
    await eventually(async () => (await usage()).creditsReserved === 0, 'the dead stream\'s credits came back');
    const after = await usage();
    expect([after.monthlyCreditsRemaining, after.prepaidCreditsRemaining]).toEqual([before.monthlyCreditsRemaining, before.prepaidCreditsRemaining]);
    await stack.waitReady('transcription');
    await expectReconciled();
  }, 120_000);

  it('the gateway told to stop (SIGTERM) mid-stream: the last finals arrive, then 1012 server_draining; the stream is charged', async () => {
    const before = await usage();
    const live = await connectLive(stack.base, { key });
    await live.next('open');
    const speech = pcmOfWav(WAV);
    await live.stream(speech);
    // Every frame reached the recognizer, none of it final yet: the drain must not lose it.
    await live.keepAliveWhile(live.until((m) => m.type === 'partial' && m.end > speech.length / 32_000 - 1.5));
    const draining = stack.supervisor.pid('gateway')!;
    process.kill(draining, 'SIGTERM');
    expect(await live.closed).toEqual({ code: 1012, reason: 'server_draining' });
    const types = live.messages.map((m) => m.type);
    expect(types.slice(-2)).toEqual(['utterance_end', 'closed']);
    expect(types).toContain('final');
    // The draining process still answers until it exits: wait for its successor, then for that to be ready.
    await eventually(async () => ![undefined, draining].includes(stack.supervisor.pid('gateway')), 'the supervisor started a new gateway');
    await stack.waitReady('gateway');
    delivered += 1;
    const after = await usage();
    expect(before.monthlyCreditsRemaining + before.prepaidCreditsRemaining - (after.monthlyCreditsRemaining + after.prepaidCreditsRemaining)).toBeGreaterThan(0);
    await expectReconciled();
  }, 120_000);

  // An AI call takes a rate-limit slot (10 a minute): only one is sent while conversion is down.
  describe.each([
    ['auth', () => read('/recordings?limit=1'), Infinity],
    ['library', () => read('/recordings?limit=1'), Infinity],
    ['billing', () => read('/usage'), Infinity],
    ['conversion', () => convert(), 1],
  ] as const)('%s killed while idle', (name, call, callsWhileDown) => {
    it('answers 503 service_unavailable while it is down (never 500, never a hang) and works again once it is back', async () => {
      expect((await call()).status).toBe(200);
      kill(name);
      // Whatever lands while the process is down or starting: 200 (a cache) or 503, nothing else.
      const during: Array<{ status: number; code: string | undefined }> = [];
      let up = false;
      const ready = stack.waitReady(name).then(() => (up = true));
      while (!up) {
        if (during.length < callsWhileDown) during.push(await outcome(await call()));
        await new Promise((r) => setTimeout(r, 50));
      }
      await ready;
      for (const o of during) expect([{ status: 200, code: undefined }, { status: 503, code: 'service_unavailable' }]).toContainEqual(o);
      if (name !== 'auth') expect(during).toContainEqual({ status: 503, code: 'service_unavailable' });
      // An AI call takes a rate-limit slot whatever its answer: poll those slowly (≤ 10 a minute).
      const every = Number.isFinite(callsWhileDown) ? 2_500 : 100;
      await eventually(async () => (await call()).status === 200, `${name} answers through the gateway again`, HANG_MS, every);
      await expectReconciled();
    }, 120_000);
  });
});
