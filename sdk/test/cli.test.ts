/**
 * The `murmur` CLI as shipped (sdk/dist/cli/main.js, built by `tsc -b` before the tests), run as a
 * child process against a real Murmur started as the SDK's own tests start it. Each command's
 * output and exit code, the stored key's file and its lookup order, and the one line each failure
 * prints; audio from a file, a URL Murmur downloads and stdin; the progress bars as a terminal
 * shows them (the CLI under util-linux's `script`, a real pseudo-terminal). Transcriptions take
 * seconds here, so each test reuses what an earlier one made.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Murmur } from '@murmur/sdk';
import { DEFAULT_AUDIO_URL_POLICY } from '../../gateway/src/upload/fetch-audio';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
const CLI = path.join(__dirname, '../dist/cli/main.js');
const BAD_KEY = `svc_${'0'.repeat(64)}`;
const NO_SUCH_RECORDING = 'rec_00000000000000000000000000';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A proxy in front of a real Murmur that passes every request through and sets the Retry-After
 * of its 429s to 0: the SDK's retries happen at once instead of after the window's seconds.
 */
async function retryAfterZeroProxy(target: string) {
  const seen: Array<{ status: number; idempotencyKey: string | undefined }> = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)).map(([k, v]) => [k, String(v)])),
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    seen.push({ status: upstream.status, idempotencyKey: req.headers['idempotency-key'] as string | undefined });
    const headers: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (!['content-length', 'transfer-encoding', 'content-encoding'].includes(k)) headers[k] = v;
    });
    if (upstream.status === 429) headers['retry-after'] = '0';
    res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('the murmur CLI against a running Murmur', () => {
  let sys: TestSystem;
  let key: string;
  let home: string;
  /** Everything the CLI printed, to prove no key ever appears in it. */
  const printed: string[] = [];
  /** What the tests share: the recording `--save` made, and its transcript. */
  const made = { recordingId: '', text: '', jobId: '' };

  /** A file server on loopback whose URLs Murmur may download (the test system allows its port). */
  let files: http.Server;
  let filesUrl = '';
  const downloaded: string[] = [];

  /** The environment the CLI runs with: only what is given (never the test's own). */
  function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
    return Object.fromEntries(
      Object.entries({ PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), MURMUR_BASE_URL: sys.baseUrl, MURMUR_API_KEY: key, ...extra }).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    );
  }

  /** Runs the CLI, stdin closed or fed. */
  function murmur(args: string[], options: { env?: Record<string, string | undefined>; input?: string | Buffer } = {}): Promise<Ran> {
    const env = cliEnv(options.env);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        printed.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(options.input ?? '');
    });
  }

  /**
   * Runs the CLI on a pseudo-terminal (`script`), its stdout to a file: answers the exit code,
   * what the terminal showed (stderr: bars and notes) and stdout.
   */
  function murmurOnTerminal(args: string[], env: Record<string, string | undefined> = {}): Promise<Ran> {
    const out = path.join(home, `stdout-${Math.random().toString(36).slice(2)}.txt`);
    // The arguments travel in the environment: no quoting of a shell command line.
    const command = `exec "$CLI_NODE" "$CLI_MAIN" ${args.map((_, i) => `"$CLI_ARG${i}"`).join(' ')} > "$CLI_OUT"`;
    const vars = Object.fromEntries(args.map((a, i) => [`CLI_ARG${i}`, a]));
    return new Promise((resolve, reject) => {
      const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
        env: { ...cliEnv(env), ...vars, SHELL: '/bin/sh', CLI_NODE: process.execPath, CLI_MAIN: CLI, CLI_OUT: out },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let terminal = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (terminal += d));
      child.on('error', reject);
      child.on('close', (code) => {
        const stdout = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
        printed.push(stdout, terminal);
        resolve({ code, stdout, stderr: terminal });
      });
    });
  }

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-cli-'));
    files = http.createServer((req, res) => {
      downloaded.push(req.url ?? '');
      if (req.url === '/speech.wav') return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(fs.readFileSync(WAV));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const port = (files.address() as AddressInfo).port;
    filesUrl = `http://127.0.0.1:${port}`;
    // The on-premise switch for this loopback file server only; every other rule as in production.
    sys = await startSystem({ ai: true, audioUrlPolicy: { ...DEFAULT_AUDIO_URL_POLICY, allowCidrs: ['127.0.0.1/32'], ports: [80, 443, port] } });
    key = (await sys.newUser('cli@example.com')).key;
  });
  afterAll(async () => {
    await sys?.stop();
    await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('lists every command in --help, and each command its options', async () => {
    const help = await murmur(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['transcribe', 'jobs list', 'jobs get', 'jobs cancel', 'jobs watch', 'convert', 'recordings list', 'recordings get', 'search', 'ask', 'usage', 'login', 'logout']) {
      expect(help.stdout).toContain(`\n  ${command} `);
    }
    const transcribe = await murmur(['transcribe', '--help']);
    expect(transcribe.code).toBe(0);
    expect(transcribe.stdout).toMatch(/--job[\s\S]*--format text\|json\|srt\|vtt[\s\S]*--json/);
    expect((await murmur(['jobs', '--help'])).stdout).toContain('jobs watch ID');
  });

  it('transcribes a file: the text on stdout, and with --save the recording id on stderr', async () => {
    const ran = await murmur(['transcribe', WAV, '--save', '--title', 'From the CLI']);
    expect(ran.code).toBe(0);
    made.text = ran.stdout.trim();
    expect(made.text.split(/\s+/).length).toBeGreaterThan(5);
    made.recordingId = /Saved as recording (rec_\w+)\./.exec(ran.stderr)?.[1] ?? '';
    expect(made.recordingId).toMatch(/^rec_/);
    // Not a terminal: the notes alone, no bar.
    expect(ran.stderr).toBe(`Charged 1 credit. Saved as recording ${made.recordingId}.\n`);
  }, 60_000);

  it('transcribes a URL: Murmur downloads it itself (audio_url), nothing is uploaded', async () => {
    const { key: urlKey } = await sys.newUser('cli-url@example.com');
    downloaded.length = 0;
    const ran = await murmur(['transcribe', `${filesUrl}/speech.wav`], { env: { MURMUR_API_KEY: urlKey } });
    expect(ran.code).toBe(0);
    expect(ran.stdout.trim()).toBe(made.text);
    expect(downloaded).toEqual(['/speech.wav']);
    expect(ran.stderr).toBe('Charged 1 credit.\n');
    // A URL Murmur may not fetch is the API's refusal (exit 5), with its code.
    const refused = await murmur(['transcribe', 'http://169.254.169.254/latest/meta-data/audio.wav'], { env: { MURMUR_API_KEY: urlKey } });
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/^Error \(audio_url_forbidden\): .+ \[req_\w+\]\n$/);
  }, 60_000);

  it('transcribes audio piped into stdin (-)', async () => {
    const { key: stdinKey } = await sys.newUser('cli-stdin@example.com');
    const ran = await murmur(['transcribe', '-', '--json'], { env: { MURMUR_API_KEY: stdinKey }, input: fs.readFileSync(WAV) });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ object: 'transcription', text: made.text, duration_seconds: expect.closeTo(7.1, 1) });
  }, 60_000);

  describe('progress bars', () => {
    const SIZE = '227 kB';
    const at = (text: string, pattern: RegExp) => text.search(pattern);

    it('shows the upload, then that Murmur is transcribing, on a terminal; then erases them before the notes', async () => {
      const { key: ttyKey } = await sys.newUser('cli-tty@example.com');
      const ran = await murmurOnTerminal(['transcribe', WAV], { MURMUR_API_KEY: ttyKey });
      expect(ran.code).toBe(0);
      expect(ran.stdout.trim()).toBe(made.text);
      const shown = ran.stderr;
      const uploaded = at(shown, new RegExp(`\\rUploading \\[█{40}\\] 100%  ${SIZE} / ${SIZE}\\x1b\\[K`));
      const transcribing = at(shown, /\rTranscribing…\x1b\[K/);
      const erased = shown.lastIndexOf('\r\x1b[K');
      const note = shown.indexOf('Charged 1 credit.');
      expect([uploaded >= 0, transcribing > uploaded, erased > transcribing, note > erased]).toEqual([true, true, true, true]);
      // Every bar fits the terminal (80 columns when it does not say).
      for (const line of shown.split(/\r/)) expect(line.replace(/\x1b\[K|\n/g, '').length).toBeLessThan(80);
    }, 60_000);

    it('with --job, shows the upload, then the recognition’s progress up to 100 %', async () => {
      const { key: jobKey } = await sys.newUser('cli-tty-job@example.com');
      const ran = await murmurOnTerminal(['transcribe', WAV, '--job', '--format', 'srt'], { MURMUR_API_KEY: jobKey });
      expect(ran.code).toBe(0);
      expect(ran.stdout).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> /);
      const shown = ran.stderr;
      const uploaded = at(shown, new RegExp(`\\rUploading \\[█{40}\\] 100%  ${SIZE} / ${SIZE}`));
      const submitted = at(shown, /Job trn_\w+ (queued|processing)\./);
      const recognised = at(shown, /\rTranscribing \[█{40}\] 100%  0:07 of 0:07\x1b\[K/);
      expect([uploaded >= 0, submitted > uploaded, recognised > submitted]).toEqual([true, true, true]);
      expect(shown.slice(recognised)).toContain('\r\x1b[K');
    }, 90_000);

    it('draws nothing with --json, even on a terminal', async () => {
      const { key: jsonKey } = await sys.newUser('cli-tty-json@example.com');
      const ran = await murmurOnTerminal(['transcribe', WAV, '--json'], { MURMUR_API_KEY: jsonKey });
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({ object: 'transcription', text: made.text });
      expect(ran.stderr).toBe('');
    }, 60_000);
  });

  it('prints the transcription as JSON with --json', async () => {
    const ran = await murmur(['transcribe', WAV, '--json']);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe('');
    const t = JSON.parse(ran.stdout) as { object: string; text: string; recording_id: string | null; credits_charged: number };
    expect(t).toMatchObject({ object: 'transcription', text: made.text, recording_id: null });
    expect(t.credits_charged).toBeGreaterThan(0);
  }, 60_000);

  it('submits a --job, follows it to its end, and prints its captions; the jobs commands read it', async () => {
    const ran = await murmur(['transcribe', WAV, '--job', '--format', 'srt']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\r?\n/);
    made.jobId = /Job (trn_\w+) (queued|processing)\./.exec(ran.stderr)?.[1] ?? '';
    expect(made.jobId).toMatch(/^trn_/);

    const listed = await murmur(['jobs', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((j) => j.id)).toContain(made.jobId);
    expect((await murmur(['jobs', 'list', '--status', 'completed'])).stdout).toMatch(new RegExp(`^${made.jobId}\\s+completed`, 'm'));
    const got = await murmur(['jobs', 'get', made.jobId]);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/^Status\s+completed$/m);
    expect(got.stdout).toContain(made.text);
    // Watching a job that has ended shows its end at once.
    const watched = await murmur(['jobs', 'watch', made.jobId]);
    expect([watched.code, watched.stdout]).toEqual([0, `${made.jobId} completed\n`]);
  }, 90_000);

  it('watches a running job, one JSON line per change, until it completes', async () => {
    const job = await new Murmur({ apiKey: key, baseUrl: sys.baseUrl }).transcriptions.create({ audio: WAV });
    const ran = await murmur(['jobs', 'watch', job.id, '--json']);
    expect(ran.code).toBe(0);
    const states = ran.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string });
    expect(states.every((s) => s.id === job.id)).toBe(true);
    expect(states.at(-1)!.status).toBe('completed');
    expect(states.length).toBeGreaterThan(1);
  }, 60_000);

  it('cancels a job, and watching a canceled job exits 9', async () => {
    const job = await new Murmur({ apiKey: key, baseUrl: sys.baseUrl }).transcriptions.create({ audio: WAV });
    const canceled = await murmur(['jobs', 'cancel', job.id]);
    if (canceled.code === 5) {
      // It had already completed: the API's conflict, with its code.
      expect(canceled.stderr).toMatch(/^Error \(transcription_not_cancelable\): .+ \[req_\w+\]\n$/);
      return;
    }
    expect([canceled.code, canceled.stdout]).toEqual([0, `${job.id} canceled\n`]);
    const watched = await murmur(['jobs', 'watch', job.id]);
    expect(watched.code).toBe(9);
    expect(watched.stdout).toBe(`${job.id} canceled\n`);
    expect(watched.stderr).toBe(`Error (transcription_canceled): The transcription ${job.id} was canceled.\n`);
  }, 60_000);

  it('converts a transcript read from stdin', async () => {
    const ran = await murmur(['convert', '--kind', 'summary', '--format', 'plain', '--json'], { input: 'Dana sends the budget on Friday. We agreed to hire two engineers.\n' });
    expect(ran.code).toBe(0);
    const artifact = JSON.parse(ran.stdout) as { object: string; kind: string; format: string; content: string };
    expect(artifact).toMatchObject({ object: 'artifact', kind: 'summary', format: 'plain' });
    expect(artifact.content.length).toBeGreaterThan(10);
    const empty = await murmur(['convert'], { input: '  \n' });
    expect([empty.code, empty.stderr]).toEqual([2, "murmur: the transcript on stdin is empty\nRun 'murmur convert --help' for usage.\n"]);
  }, 60_000);

  it('lists recordings and shows one, with its transcript as text or captions', async () => {
    const listed = await murmur(['recordings', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${made.recordingId}\\s.*From the CLI$`, 'm'));
    const word = made.text.split(/\s+/).find((w) => w.length > 4)!;
    const found = await murmur(['recordings', 'list', '--q', word, '--limit', '1', '--json']);
    expect((JSON.parse(found.stdout) as Array<{ id: string }>).map((r) => r.id)).toEqual([made.recordingId]);
    const got = await murmur(['recordings', 'get', made.recordingId]);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/^Title\s+From the CLI$/m);
    expect(got.stdout).toContain(made.text);
    const vtt = await murmur(['recordings', 'get', made.recordingId, '--format', 'vtt']);
    expect(vtt.stdout).toMatch(/^WEBVTT/);
  });

  it('searches the library and asks it', async () => {
    const word = made.text.split(/\s+/).find((w) => w.length > 4)!;
    const found = await murmur(['search', word, '--json']);
    expect(found.code).toBe(0);
    expect((JSON.parse(found.stdout) as Array<{ id: string }>).map((r) => r.id)).toContain(made.recordingId);
    expect((await murmur(['search', word])).stdout).toMatch(new RegExp(`^1\\. From the CLI \\(${made.recordingId}`));
    const asked = await murmur(['ask', 'What', 'about', `${word}?`]);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toMatch(/\n\nSources:\n\[1\] From the CLI \(rec_/);
  }, 60_000);

  it('shows usage for people and as JSON', async () => {
    const human = await murmur(['usage']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Plan\s+.+\nCredits\s+[\d,]+ of [\d,]+ monthly left/);
    expect(human.stdout).toMatch(/^This period\s+\d+ transcriptions/m);
    const json = JSON.parse((await murmur(['--json', 'usage'])).stdout) as { object: string; counters: { transcriptions: number } };
    expect(json.object).toBe('usage');
    expect(json.counters.transcriptions).toBeGreaterThanOrEqual(3);
  });

  describe('login', () => {
    const file = () => path.join(home, 'config', 'murmur', 'config.json');
    let loginKey: string;
    beforeAll(async () => {
      loginKey = (await sys.newUser('cli-login@example.com')).key;
    });

    it('refuses a bad key and stores nothing', async () => {
      const ran = await murmur(['login', '--key', BAD_KEY], { env: { MURMUR_API_KEY: undefined } });
      expect(ran.code).toBe(3);
      expect(ran.stderr).toMatch(/^Error \(invalid_api_key\): .+ \[req_\w+\]\n$/);
      expect(fs.existsSync(file())).toBe(false);
    });

    it('checks a key read from stdin and stores it readable by its owner only', async () => {
      const ran = await murmur(['login'], { env: { MURMUR_API_KEY: undefined }, input: `${loginKey}\n` });
      expect(ran.code).toBe(0);
      expect(ran.stdout).toBe(`Logged in as cli-login@example.com. The key is stored in ${file()} (readable by you only).\n`);
      expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file())).mode & 0o777).toBe(0o700);
      expect(JSON.parse(fs.readFileSync(file(), 'utf8'))).toEqual({ apiKey: loginKey, baseUrl: sys.baseUrl });
    });

    it('uses the stored key; MURMUR_API_KEY wins over it, and --api-key over both', async () => {
      expect((await murmur(['usage'], { env: { MURMUR_API_KEY: undefined, MURMUR_BASE_URL: undefined } })).code).toBe(0);
      const envWins = await murmur(['usage'], { env: { MURMUR_API_KEY: BAD_KEY } });
      expect([envWins.code, envWins.stderr]).toEqual([3, expect.stringMatching(/^Error \(invalid_api_key\)/)]);
      expect((await murmur(['usage', '--api-key', loginKey], { env: { MURMUR_API_KEY: BAD_KEY } })).code).toBe(0);
    });

    it('logs out: the file is gone, and a command without a key says how to get one (exit 3)', async () => {
      const ran = await murmur(['logout'], { env: { MURMUR_API_KEY: undefined } });
      expect([ran.code, ran.stdout]).toEqual([0, `Logged out: removed ${file()}.\n`]);
      expect(fs.existsSync(file())).toBe(false);
      const keyless = await murmur(['usage'], { env: { MURMUR_API_KEY: undefined } });
      expect([keyless.code, keyless.stderr]).toEqual([3, expect.stringMatching(/^Error: No API key: run 'murmur login', set MURMUR_API_KEY, or pass --api-key\./)]);
    });
  });

  describe('exit codes, each with one line on stderr', () => {
    it('3 for a bad key', async () => {
      const ran = await murmur(['recordings', 'list'], { env: { MURMUR_API_KEY: BAD_KEY } });
      expect(ran.code).toBe(3);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(/^Error \(invalid_api_key\): The API key is malformed, unknown or revoked\..* \[req_\w+\]\n$/);
    });

    it('4 for an id that does not exist', async () => {
      const ran = await murmur(['recordings', 'get', NO_SUCH_RECORDING]);
      expect(ran.code).toBe(4);
      expect(ran.stderr).toMatch(/^Error \(not_found\): .+ \[req_\w+\]\n$/);
    });

    it('2 for bad arguments, before anything is sent', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['recordings', 'list', '--limit', 'zero'], /^murmur: --limit must be a whole number from 1 to 10000 \(not 'zero'\)\nRun 'murmur recordings list --help' for usage\.\n$/],
        [['transcribe', WAV, '--format', 'docx'], /^murmur: --format must be one of text, json, srt, vtt \(not 'docx'\)\n/],
        [['transcribe', '/no/such/file.wav'], /^murmur: no such file: \/no\/such\/file\.wav\n/],
        [['transcribe'], /^murmur: missing FILE\|URL\|-\n/],
        [['jobs', 'get', 'trn_1', '--bogus'], /^murmur: unknown option --bogus\nRun 'murmur jobs get --help' for usage\.\n$/],
        [['frobnicate'], /^murmur: unknown command 'frobnicate'\nRun 'murmur --help' for usage\.\n$/],
      ];
      for (const [args, message] of cases) {
        const ran = await murmur(args, { env: { MURMUR_BASE_URL: 'http://127.0.0.1:1' } });
        expect([args, ran.code, ran.stderr]).toEqual([args, 2, expect.stringMatching(message)]);
      }
    });

    it('5 for a request the API refuses', async () => {
      const ran = await murmur(['search', '']);
      expect(ran.code).toBe(5);
      expect(ran.stderr).toMatch(/^Error \(invalid_request\): .+ \[req_\w+\]\n$/);
    });

    it('6 when no AI Credits are left', async () => {
      const broke = await sys.newUser('cli-broke@example.com');
      await sys.admin.billing.adjustCredits({ userId: broke.user.id, monthlyCredits: 0, note: 'test' });
      const ran = await murmur(['transcribe', WAV], { env: { MURMUR_API_KEY: broke.key } });
      expect(ran.code).toBe(6);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(/^Error \(insufficient_tokens\): This call needs \d+ AI Credits? and 0 are left; nothing was charged\..* \[req_\w+\]\n$/);
    });

    it('7 when rate limited, after the retries the SDK makes', async () => {
      const { key: busyKey } = await sys.newUser('cli-busy@example.com');
      // The 10 AI calls a minute, spent.
      const sdk = new Murmur({ apiKey: busyKey, baseUrl: sys.baseUrl, maxRetries: 0 });
      for (let i = 0; i < 10; i++) await sdk.convert({ transcript: `Note ${i}: Dana sends the budget on Friday.`, kind: 'summary' });
      // Murmur's own 429s, through a proxy that only shortens their Retry-After to 0, so the SDK retries at once.
      const proxy = await retryAfterZeroProxy(sys.baseUrl);
      try {
        const ran = await murmur(['convert', '--kind', 'summary'], { env: { MURMUR_API_KEY: busyKey, MURMUR_BASE_URL: proxy.url }, input: 'Dana sends the budget on Friday.\n' });
        expect(ran.code).toBe(7);
        expect(ran.stdout).toBe('');
        expect(ran.stderr).toMatch(/^Error \(rate_limit_exceeded\): .+ \[req_\w+\]\n$/);
        expect(proxy.seen.map((s) => s.status)).toEqual([429, 429, 429]);
        expect(new Set(proxy.seen.map((s) => s.idempotencyKey)).size).toBe(1);
      } finally {
        await proxy.close();
      }
    });

    it('8 when Murmur cannot be reached', async () => {
      const ran = await murmur(['usage', '--base-url', 'http://127.0.0.1:1']);
      expect(ran.code).toBe(8);
      expect(ran.stderr).toMatch(/^Error: Could not reach http:\/\/127\.0\.0\.1:1: .+ Is Murmur running there\?/);
    });
  });

  it('never prints a key', () => {
    expect(printed.length).toBeGreaterThan(40);
    for (const text of printed) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(BAD_KEY);
      expect(text).not.toMatch(/svc_[A-Za-z0-9]{8,}/);
    }
  });
});
