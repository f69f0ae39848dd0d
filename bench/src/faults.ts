/**
 * `npm run bench -- faults` (issue 11): what a client sees when a process dies. The whole
 * topology runs as processes under the launcher's Supervisor (which restarts a killed child,
 * as `npm start` does) on a Postgres cluster of the benchmark's own (never the shared server).
 * A steady, bounded load of reads and AI calls runs throughout; each scenario kills one service
 * with SIGKILL — or restarts Postgres — and measures how answers split into 2xx / 503 / other
 * 5xx / hangs, and how long until every kind of call succeeds again. After each scenario the
 * credits must reconcile: ledger = balances, nothing held, one commit per delivered AI call.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { startTestPostgres, testPostgresUnavailable, type TestPostgres } from '@murmur/kit/testing';
import type { billing } from '@murmur/proto';
import { machineInfo, type Benchmark, type BenchmarkReport } from './benchmark';
import { createBenchUser, describe, redisNote, startStack, type BenchUser, type ServiceName, type Stack } from './stack';

const SETTINGS = {
  /** Seconds of load before each fault. */
  before_s: 3,
  /** Longest the load watches after a fault for recovery; then 3 s more of steady success. */
  observe_max_s: 40,
  after_recovery_s: 3,
  /** A request unanswered this long counts as a hang (a transcription: 30 s, for a 4 s file on a busy 2-core machine). */
  hang_ms: 10_000,
  transcribe_hang_ms: 30_000,
  /** Concurrent read loops (GET /recordings, GET /usage) and AI loops (convert; one transcribe loop). */
  read_loops: 4,
  convert_loops: 1,
  transcribe_loops: 1,
  /** Pause between two requests of one loop: a bounded load, not a saturation test. */
  pause_ms: 100,
  /** Users the AI calls rotate over (10 AI calls a minute each). */
  ai_users: 40,
  /** Credit hold lease of the AI services (production default 30 s), so reconciliation is quick. */
  hold_lease_seconds: 5,
  log_level: 'error',
};

const SCENARIOS: ReadonlyArray<ServiceName | 'postgres'> = ['auth', 'billing', 'library', 'transcription', 'conversion', 'postgres'];
const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';

type Kind = 'read' | 'convert' | 'transcribe';
interface Sample {
  kind: Kind;
  start: number;
  end: number;
  /** HTTP status; 0 = no HTTP answer (connection error), -1 = hang. */
  status: number;
  code?: string;
}

interface Outcome {
  requests: number;
  ok_2xx: number;
  unavailable_503: number;
  other_5xx: number;
  other_4xx: number;
  hangs: number;
  connection_errors: number;
  /** Fault → the end of the last failed request (0: nothing failed). */
  recovery_ms: number;
  other_5xx_codes: Record<string, number>;
  /** Per kind of call: answers by status (-1 hang, 0 connection error), and ms from the fault to its last failure's end. */
  by_kind: Record<string, { statuses: Record<string, number>; last_failure_ms: number | null; hang_started_at_ms: number[] }>;
  credits_reconciled: boolean;
  reconcile_detail?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Load {
  readonly samples: Sample[] = [];
  /** AI calls answered 200, by user id: exactly these may have been charged. */
  readonly delivered = new Map<string, number>();
  private running = true;
  private loops: Promise<void>[] = [];
  private next = 0;

  constructor(private readonly stack: Stack, private readonly reader: BenchUser, private readonly aiUsers: BenchUser[], private readonly audio: Buffer) {}

  start(): void {
    for (let i = 0; i < SETTINGS.read_loops; i += 1) this.loops.push(this.loop('read', i));
    for (let i = 0; i < SETTINGS.convert_loops; i += 1) this.loops.push(this.loop('convert', i));
    for (let i = 0; i < SETTINGS.transcribe_loops; i += 1) this.loops.push(this.loop('transcribe', i));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private aiUser(): BenchUser {
    const user = this.aiUsers[this.next % this.aiUsers.length]!;
    this.next += 1;
    return user;
  }

  private async loop(kind: Kind, i: number): Promise<void> {
    const base = `${this.stack.gateway}/api/v1`;
    while (this.running) {
      const user = kind === 'read' ? this.reader : this.aiUser();
      const init = ((): [string, RequestInit] => {
        if (kind === 'read') return [i % 2 === 0 ? `${base}/recordings?limit=5` : `${base}/usage`, { headers: user.headers }];
        if (kind === 'convert') {
          return [`${base}/convert`, {
            method: 'POST',
            headers: { ...user.headers, 'content-type': 'application/json' },
            body: JSON.stringify({ transcript: 'Marcus will send the deck by Friday. We agreed to ship in March.', kind: 'summary' }),
          }];
        }
        const form = new FormData();
        form.append('audio', new Blob([this.audio], { type: 'audio/wav' }), 'speech.wav');
        return [`${base}/transcribe`, { method: 'POST', headers: user.headers, body: form }];
      })();
      const start = Date.now();
      let status: number;
      let code: string | undefined;
      try {
        const res = await fetch(init[0], { ...init[1], signal: AbortSignal.timeout(kind === 'transcribe' ? SETTINGS.transcribe_hang_ms : SETTINGS.hang_ms) });
        status = res.status;
        const body = (await res.json().catch(() => ({}))) as { error?: { code?: string } };
        code = body.error?.code;
        if (status === 200 && kind !== 'read') this.delivered.set(user.userId, (this.delivered.get(user.userId) ?? 0) + 1);
      } catch (err) {
        status = (err as Error).name === 'TimeoutError' ? -1 : 0;
      }
      this.samples.push({ kind, start, end: Date.now(), status, ...(code ? { code } : {}) });
      await sleep(SETTINGS.pause_ms);
    }
  }
}

function summarize(samples: Sample[], faultAt: number): Omit<Outcome, 'credits_reconciled' | 'reconcile_detail'> {
  const window = samples.filter((s) => s.end >= faultAt);
  const byKind: Outcome['by_kind'] = {};
  for (const kind of ['read', 'convert', 'transcribe'] as const) {
    const mine = window.filter((s) => s.kind === kind);
    const statuses: Record<string, number> = {};
    for (const s of mine) statuses[String(s.status)] = (statuses[String(s.status)] ?? 0) + 1;
    const fails = mine.filter((s) => s.status < 200 || s.status >= 300);
    byKind[kind] = {
      statuses,
      last_failure_ms: fails.length ? Math.max(...fails.map((s) => s.end)) - faultAt : null,
      hang_started_at_ms: mine.filter((s) => s.status === -1).map((s) => s.start - faultAt),
    };
  }
  const failed = window.filter((s) => s.status < 200 || s.status >= 300);
  const other5xx: Record<string, number> = {};
  for (const s of window) if (s.status >= 500 && s.status !== 503) other5xx[`${s.status} ${s.code ?? ''}`.trim()] = (other5xx[`${s.status} ${s.code ?? ''}`.trim()] ?? 0) + 1;
  return {
    requests: window.length,
    ok_2xx: window.filter((s) => s.status >= 200 && s.status < 300).length,
    unavailable_503: window.filter((s) => s.status === 503).length,
    other_5xx: window.filter((s) => s.status >= 500 && s.status !== 503).length,
    other_4xx: window.filter((s) => s.status >= 400 && s.status < 500).length,
    hangs: window.filter((s) => s.status === -1).length,
    connection_errors: window.filter((s) => s.status === 0).length,
    recovery_ms: failed.length === 0 ? 0 : Math.max(...failed.map((s) => s.end)) - faultAt,
    other_5xx_codes: other5xx,
    by_kind: byKind,
  };
}

/** Every AI user's ledger sums to the balances, nothing is held, and commits = delivered calls. */
async function reconcile(stack: Stack, users: BenchUser[], delivered: Map<string, number>): Promise<{ ok: boolean; detail?: string }> {
  const deadline = Date.now() + (SETTINGS.hold_lease_seconds + 40) * 1000;
  let detail = '';
  while (Date.now() < deadline) {
    detail = '';
    try {
      for (const user of users) {
        const { usage } = await stack.clients.billing.getUsage({ userId: user.userId });
        const entries: billing.LedgerEntry[] = [];
        let pageToken = '';
        do {
          const page = await stack.clients.billing.listLedgerEntries({ userId: user.userId, pageSize: 100, pageToken });
          entries.push(...page.entries);
          pageToken = page.nextPageToken;
        } while (pageToken);
        const sum = (f: (e: billing.LedgerEntry) => number) => entries.reduce((n, e) => n + f(e), 0);
        const count = (kind: string) => entries.filter((e) => e.kind === kind).length;
        const problems: string[] = [];
        if (usage!.creditsReserved !== 0) problems.push(`${usage!.creditsReserved} credits still held`);
        if (sum((e) => e.monthlyDelta) !== usage!.monthlyCreditsRemaining) problems.push('monthly ledger ≠ balance');
        if (count('reserve') !== count('commit') + count('release') + count('expire')) problems.push('reserve ≠ commit + release + expire');
        if (count('commit') !== (delivered.get(user.userId) ?? 0)) problems.push(`${count('commit')} commits for ${delivered.get(user.userId) ?? 0} delivered calls`);
        if (problems.length > 0) detail += `${user.email}: ${problems.join(', ')}; `;
      }
      if (!detail) return { ok: true };
    } catch (err) {
      detail = describe(err);
    }
    await sleep(1000);
  }
  return { ok: false, detail };
}

/**
 * Stops Postgres like a crash (SIGQUIT to the postmaster: `pg_ctl stop -m immediate`) without
 * blocking this process, so the load keeps running through the outage.
 */
async function crashPostgres(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  let dataDir: string;
  try {
    dataDir = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
  } finally {
    await client.end();
  }
  const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGQUIT');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
  throw new Error('Postgres did not stop within 10 s of SIGQUIT');
}

async function waitAllOk(samples: Sample[], since: number): Promise<void> {
  // Recovered: every kind has succeeded after its last failure, for after_recovery_s.
  const deadline = since + SETTINGS.observe_max_s * 1000;
  while (Date.now() < deadline) {
    const recent = samples.filter((s) => s.end >= since);
    const lastFail = Math.max(since, ...recent.filter((s) => s.status < 200 || s.status >= 300).map((s) => s.end));
    const kinds: Kind[] = ['read', 'convert', 'transcribe'];
    const allBack = kinds.every((k) => recent.some((s) => s.kind === k && s.start > lastFail && s.status === 200));
    if (allBack && Date.now() - lastFail > SETTINGS.after_recovery_s * 1000) return;
    await sleep(200);
  }
}

export const faultsBench: Benchmark = {
  name: 'faults',
  description: 'kill -9 of each service and a Postgres restart under load: 503 vs 5xx vs hangs, recovery time, credits reconciled',
  async run(log): Promise<BenchmarkReport> {
    const why = testPostgresUnavailable();
    if (why) throw new Error(`faults needs a Postgres cluster of its own (it restarts it): ${why}`);
    if (!fs.existsSync(WAV)) throw new Error(`${WAV} is missing: apt-get install pocketsphinx-testdata`);
    const pg: TestPostgres = await startTestPostgres();
    let stack: Stack | undefined;
    try {
      stack = await startStack(log, {
        services: ['auth', 'billing', 'library', 'transcription', 'conversion'],
        adminUrl: pg.url,
        logLevel: SETTINGS.log_level,
        env: { MURMUR_HOLD_LEASE_SECONDS: String(SETTINGS.hold_lease_seconds), MURMUR_TRANSCRIPTION_ENGINE: 'pocketsphinx', MURMUR_TRANSCRIBE_CONCURRENCY: '1' },
      });
      const s = stack;
      const reader = await createBenchUser(s, 'faults-reader@example.com', { recordings: 20 });
      const aiUsers: BenchUser[] = [];
      for (let i = 0; i < SETTINGS.ai_users; i += 1) aiUsers.push(await createBenchUser(s, `faults-ai-${i}@example.com`, { monthlyCredits: 100_000 }));
      const load = new Load(s, reader, aiUsers, fs.readFileSync(WAV));
      load.start();
      const results: Record<string, Outcome> = {};
      try {
        for (const target of SCENARIOS) {
          await sleep(SETTINGS.before_s * 1000);
          log(`fault: ${target === 'postgres' ? 'Postgres restart (immediate stop, start)' : `kill -9 ${target}`}`);
          const faultAt = Date.now();
          if (target === 'postgres') {
            await crashPostgres(pg.url);
            // Down for a moment under load (TestPostgres.start blocks this process while it starts).
            await sleep(1_000);
            await pg.start();
          } else {
            const pid = s.procs.pids()[target];
            if (pid === undefined) throw new Error(`${target} is not running`);
            process.kill(pid, 'SIGKILL');
          }
          await waitAllOk(load.samples, faultAt);
          const outcome = summarize(load.samples, faultAt);
          results[target] = { ...outcome, credits_reconciled: false };
          log(`  ${target}: ${outcome.ok_2xx} 2xx, ${outcome.unavailable_503} 503, ${outcome.other_5xx} other 5xx, ${outcome.hangs} hangs, recovery ${outcome.recovery_ms} ms`);
          // Samples of the next scenario start clean.
          load.samples.length = 0;
        }
      } finally {
        await load.stop();
      }
      const reconciled = await reconcile(s, aiUsers, load.delivered);
      for (const r of Object.values(results)) {
        r.credits_reconciled = reconciled.ok;
        if (reconciled.detail) r.reconcile_detail = reconciled.detail;
      }

      const all = Object.values(results);
      const targets = {
        zero_other_5xx: all.every((r) => r.other_5xx === 0),
        zero_hangs: all.every((r) => r.hangs === 0),
        recovery_within_5s: all.every((r) => r.recovery_ms <= 5_000),
        credits_reconciled: reconciled.ok,
      };
      return {
        result: {
          benchmark: 'faults',
          timestamp: new Date().toISOString(),
          machine: machineInfo(),
          settings: SETTINGS,
          redis_used: s.redis,
          redis: redisNote(s.redis),
          scenarios: results,
          targets,
          targets_met: Object.values(targets).every(Boolean),
        },
        table: {
          headers: ['fault', 'requests', '2xx', '503', 'other 5xx', 'hangs', 'conn err', 'recovery ms'],
          rows: Object.entries(results).map(([name, r]) => [name, String(r.requests), String(r.ok_2xx), String(r.unavailable_503), String(r.other_5xx), String(r.hangs), String(r.connection_errors), String(r.recovery_ms)]),
        },
        notes: [
          `targets: zero other 5xx ${targets.zero_other_5xx ? 'met' : 'MISSED'}, zero hangs ${targets.zero_hangs ? 'met' : 'MISSED'}, recovery ≤ 5 s ${targets.recovery_within_5s ? 'met' : 'MISSED'}, credits reconciled ${reconciled.ok ? 'yes' : `NO (${reconciled.detail})`}`,
          ...Object.entries(results).filter(([, r]) => r.other_5xx > 0).map(([name, r]) => `${name}: other 5xx ${JSON.stringify(r.other_5xx_codes)}`),
        ],
        // A fault benchmark's 5xx are its measurement, not an invalid run.
        failures: [],
      };
    } finally {
      await stack?.stop();
      await pg.drop();
    }
  },
};
