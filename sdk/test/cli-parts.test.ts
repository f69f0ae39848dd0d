/**
 * The CLI's pure parts, table-tested: argument parsing, exit codes and error lines, the progress
 * bar, the config file's place, mode and key order, and `run` itself for what needs no network.
 * They are loaded as shipped (sdk/dist, ESM, built by `tsc -b` before the tests).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';

const load = async () => ({
  args: await import('../dist/cli/args.js'),
  config: await import('../dist/cli/config.js'),
  exit: await import('../dist/cli/exit-codes.js'),
  output: await import('../dist/cli/output.js'),
  program: await import('../dist/cli/program.js'),
  progress: await import('../dist/cli/progress.js'),
  sdk: await import('../dist/index.js'),
});
let cli: Awaited<ReturnType<typeof load>>;

beforeAll(async () => {
  cli = await load();
});

const body = (code: string, requestId = 'req_1') => ({ type: 'api_error', code, message: `The ${code} message.`, param: null, request_id: requestId });

describe('exit codes', () => {
  it('gives each class of failure its code', () => {
    const { apiError, ConnectionError, TimeoutError, JobEndedError } = cli.sdk;
    const { CliError, UsageError, exitCodeOf } = cli.exit;
    const api = (status: number, code = 'x') => apiError(status, body(code), new Headers());
    const job = (status: 'failed' | 'canceled') => new JobEndedError({ id: 'trn_1', status } as never);
    const cases: Array<[string, unknown, number]> = [
      ['401 invalid_api_key', api(401, 'invalid_api_key'), 3],
      ['403 insufficient_scope', api(403, 'insufficient_scope'), 3],
      ['404 not_found', api(404, 'not_found'), 4],
      ['400 invalid_request', api(400, 'invalid_request'), 5],
      ['409 transcription_not_cancelable', api(409, 'transcription_not_cancelable'), 5],
      ['413 audio_too_large', api(413, 'audio_too_large'), 5],
      ['415 unsupported_audio', api(415, 'unsupported_audio'), 5],
      ['422 audio_url_unreachable', api(422, 'audio_url_unreachable'), 5],
      ['402 insufficient_tokens', api(402, 'insufficient_tokens'), 6],
      ['402 spending_cap_reached', api(402, 'spending_cap_reached'), 6],
      ['429 rate_limit_exceeded', api(429, 'rate_limit_exceeded'), 7],
      ['500 internal_error', api(500, 'internal_error'), 8],
      ['502 transcription_failed', api(502, 'transcription_failed'), 8],
      ['503 service_unavailable', api(503, 'service_unavailable'), 8],
      ['a refused connection', new ConnectionError('Could not reach x'), 8],
      ['a timeout', new TimeoutError('No answer'), 8],
      ['a failed job', job('failed'), 9],
      ['a canceled job', job('canceled'), 9],
      ['bad arguments', new UsageError('nope'), 2],
      ['a CLI failure', new CliError('broken config'), 1],
      ['a bug', new TypeError('x is undefined'), 1],
      ['a thrown string', 'what', 1],
    ];
    expect(cases.map(([what, err]) => [what, exitCodeOf(err)])).toEqual(cases.map(([what, , code]) => [what, code]));
  });

  it('prints one line per failure: the API message with its code and request id', () => {
    const { apiError, ConnectionError, JobEndedError } = cli.sdk;
    const { errorMessage, UsageError } = cli.exit;
    expect(errorMessage(apiError(402, body('insufficient_tokens', 'req_abc'), new Headers()))).toBe('Error (insufficient_tokens): The insufficient_tokens message. [req_abc]');
    expect(errorMessage(apiError(404, body('not_found', ''), new Headers()))).toBe('Error (not_found): The not_found message.');
    expect(errorMessage(apiError(404, body('not_found', ''), new Headers({ 'x-request-id': 'req_hdr' })))).toBe('Error (not_found): The not_found message. [req_hdr]');
    const failed = { id: 'trn_1', status: 'failed', error: { type: 'api_error', code: 'transcription_failed', message: 'The engine failed.', param: null } };
    expect(errorMessage(new JobEndedError(failed as never))).toBe('Error (transcription_failed): The transcription trn_1 failed: The engine failed.');
    expect(errorMessage(new JobEndedError({ id: 'trn_2', status: 'canceled', error: null } as never))).toBe('Error (transcription_canceled): The transcription trn_2 was canceled.');
    expect(errorMessage(new UsageError('missing ID', 'jobs get'))).toBe("murmur: missing ID\nRun 'murmur jobs get --help' for usage.");
    expect(errorMessage(new UsageError("unknown command 'x'"))).toBe("murmur: unknown command 'x'\nRun 'murmur --help' for usage.");
    expect(errorMessage(new ConnectionError('Could not reach http://h: fetch failed'))).toBe('Error: Could not reach http://h: fetch failed. Is Murmur running there? Set --base-url or MURMUR_BASE_URL.');
  });

  it('is documented in sdk/README.md exactly as the CLI prints it', () => {
    const readme = fs.readFileSync(path.join(__dirname, '../README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(rows).toEqual(cli.exit.EXIT_CODE_TABLE.map(([code, meaning]) => [code, meaning]));
  });
});

describe('arguments', () => {
  const options = {
    limit: { type: 'string', value: 'N', integer: [1, 100], description: '' },
    format: { type: 'string', choices: ['text', 'srt'], description: '' },
    save: { type: 'boolean', description: '' },
  } as const;

  it('parses options and positionals, the global ones too', () => {
    const { values, positionals } = cli.args.parseOptions('x', options, ['a', '--limit', '5', '--json', '--format=srt', 'b', '--save', '--base-url', 'http://h']);
    expect(positionals).toEqual(['a', 'b']);
    expect(values).toMatchObject({ limit: '5', json: true, format: 'srt', save: true, 'base-url': 'http://h' });
    expect(cli.args.globalsOf(values)).toEqual({ json: true, quiet: false, help: false, baseUrl: 'http://h' });
    expect(cli.args.parseOptions('x', options, ['--limit', '5', '--limit', '7']).values.limit).toBe('7');
    expect(cli.args.parseOptions('x', options, ['--', '--not-an-option']).positionals).toEqual(['--not-an-option']);
  });

  it('refuses what is wrong, naming the option', () => {
    const refused: Array<[string[], string]> = [
      [['--limit', '0'], "--limit must be a whole number from 1 to 100 (not '0')"],
      [['--limit', '101'], "--limit must be a whole number from 1 to 100 (not '101')"],
      [['--limit', '2.5'], "--limit must be a whole number from 1 to 100 (not '2.5')"],
      [['--format', 'docx'], "--format must be one of text, srt (not 'docx')"],
      [['--bogus'], 'unknown option --bogus'],
      [['-z'], 'unknown option -z'],
      [['--limit'], '--limit needs a value'],
      [['--save=yes'], '--save takes no value'],
    ];
    for (const [args, message] of refused) {
      let caught: unknown;
      try {
        cli.args.parseOptions('jobs list', options, args);
      } catch (err) {
        caught = err;
      }
      expect([args, caught]).toEqual([args, expect.objectContaining({ message, command: 'jobs list', exitCode: 2 })]);
    }
  });

  it('finds the command after global options, and a group’s subcommand', () => {
    const split = cli.program.splitCommand;
    expect(split(['--json', '--base-url', 'http://h', 'jobs', 'list', '--limit', '5'])).toEqual({ words: ['jobs', 'list'], rest: ['--json', '--base-url', 'http://h', '--limit', '5'] });
    expect(split(['transcribe', '-', '--job'])).toEqual({ words: ['transcribe'], rest: ['-', '--job'] });
    expect(split(['jobs', '--help'])).toEqual({ words: ['jobs'], rest: ['--help'] });
    expect(split(['search', 'jobs', 'list'])).toEqual({ words: ['search'], rest: ['jobs', 'list'] });
    expect(split(['--help'])).toEqual({ words: [], rest: ['--help'] });
  });
});

describe('the progress bar', () => {
  const renderBar = (state: Parameters<typeof cli.progress.renderBar>[0]) => cli.progress.renderBar(state);
  const formatBytes = (bytes: number) => cli.progress.formatBytes(bytes);

  it('draws the fraction done, the percentage and the detail', () => {
    const cases: Array<[number | null, string]> = [
      [0, `Uploading [${'░'.repeat(40)}]   0%  1 kB`],
      [0.5, `Uploading [${'█'.repeat(20)}${'░'.repeat(20)}]  50%  1 kB`],
      [0.999, `Uploading [${'█'.repeat(40)}]  99%  1 kB`],
      [1, `Uploading [${'█'.repeat(40)}] 100%  1 kB`],
      [7, `Uploading [${'█'.repeat(40)}] 100%  1 kB`],
      [Number.NaN, `Uploading [${'░'.repeat(40)}]   0%  1 kB`],
      [null, 'Uploading  1 kB'],
    ];
    expect(cases.map(([fraction]) => renderBar({ label: 'Uploading', fraction, detail: '1 kB', columns: 80 }))).toEqual(cases.map(([, line]) => line));
  });

  it('fits any terminal width, dropping the bar when it has no room', () => {
    expect(renderBar({ label: 'Uploading', fraction: 0.5, detail: '118 kB / 227 kB', columns: 40 })).toBe('Uploading  50%  118 kB / 227 kB');
    expect(renderBar({ label: 'Uploading', fraction: 0.5, detail: '118 kB / 227 kB', columns: 20 })).toBe('Uploading  50%  11…');
    for (let columns = 5; columns <= 140; columns++) {
      for (const fraction of [null, 0, 0.3, 1]) {
        expect(renderBar({ label: 'Transcribing', fraction, detail: '0:03 of 0:07', columns }).length).toBeLessThanOrEqual(columns);
      }
    }
  });

  it('counts bytes as people read them', () => {
    const cases: Array<[number, string]> = [
      [0, '0 B'],
      [999, '999 B'],
      [1000, '1.0 kB'],
      [1500, '1.5 kB'],
      [227_244, '227 kB'],
      [12_345_678, '12 MB'],
      [500_000_000, '500 MB'],
      [1_500_000_000, '1.5 GB'],
    ];
    expect(cases.map(([n]) => formatBytes(n))).toEqual(cases.map(([, s]) => s));
    expect(cli.progress.bytesDetail(1500, null)).toBe('1.5 kB');
    expect(cli.progress.bytesDetail(1500, 3000)).toBe('1.5 kB / 3.0 kB');
  });

  it('redraws at most every 100 ms (but always at 100 %), over itself, and erases itself when done', () => {
    const written: string[] = [];
    let now = 1_000;
    const bar = new cli.progress.ProgressBar({ write: (t: string) => written.push(t), isTTY: true, columns: 41 }, 'Up', () => now);
    bar.done();
    expect(written).toEqual([]);
    bar.update(0.1);
    now += 50;
    bar.update(0.2);
    now += 60;
    bar.update(0.3);
    now += 1;
    bar.update(1);
    bar.done();
    expect(written).toEqual([
      `\r${renderBar({ label: 'Up', fraction: 0.1, columns: 40 })}\x1b[K`,
      `\r${renderBar({ label: 'Up', fraction: 0.3, columns: 40 })}\x1b[K`,
      `\r${renderBar({ label: 'Up', fraction: 1, columns: 40 })}\x1b[K`,
      '\r\x1b[K',
    ]);
  });

  it('is drawn on a terminal only, and never with --json or --quiet', () => {
    const shown = (isTTY: boolean, json: boolean, quiet: boolean) => {
      const written: string[] = [];
      new cli.output.Output({ stdout: { write: () => true }, stderr: { write: (t: string) => written.push(t), isTTY } }, json, quiet).bar('Up').update(0.5);
      return written.length > 0;
    };
    expect([shown(true, false, false), shown(false, false, false), shown(true, true, false), shown(true, false, true)]).toEqual([true, false, false, false]);
  });
});

describe('the config file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-config-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('lives in the user’s config folder', () => {
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ XDG_CONFIG_HOME: '/x/cfg' }, 'linux', '/x/cfg/murmur/config.json'],
      [{ XDG_CONFIG_HOME: '/x/cfg' }, 'darwin', '/x/cfg/murmur/config.json'],
      [{ XDG_CONFIG_HOME: 'relative' }, 'linux', '/home/u/.config/murmur/config.json'],
      [{}, 'linux', '/home/u/.config/murmur/config.json'],
      [{}, 'darwin', '/home/u/.config/murmur/config.json'],
      [{ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32', 'C:\\Users\\u\\AppData\\Roaming\\murmur\\config.json'],
    ];
    expect(cases.map(([env, platform]) => cli.config.configFile(env, platform, '/home/u'))).toEqual(cases.map(([, , file]) => file));
  });

  it('takes the key from --api-key, then MURMUR_API_KEY, then the stored one', () => {
    const { resolveApiKey } = cli.config;
    expect(resolveApiKey({ flag: 'f', env: 'e', stored: 's' })).toEqual({ key: 'f', from: 'flag' });
    expect(resolveApiKey({ env: 'e', stored: 's' })).toEqual({ key: 'e', from: 'env' });
    expect(resolveApiKey({ flag: '', env: '', stored: 's' })).toEqual({ key: 's', from: 'config' });
    expect(resolveApiKey({})).toBeUndefined();
    expect(cli.config.resolveBaseUrl({ env: 'http://e', stored: 'http://s' })).toBe('http://e');
  });

  it('is written readable by its owner only, even over a looser file and folder', async () => {
    const file = path.join(dir, 'murmur', 'config.json');
    fs.mkdirSync(path.dirname(file), { mode: 0o755 });
    fs.writeFileSync(file, '{}', { mode: 0o644 });
    await cli.config.writeConfig(file, { apiKey: 'svc_k', baseUrl: 'http://h' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['config.json']);
    expect(await cli.config.readConfig(file)).toEqual({ apiKey: 'svc_k', baseUrl: 'http://h' });
    expect(await cli.config.removeConfig(file)).toBe(true);
    expect(await cli.config.removeConfig(file)).toBe(false);
    expect(await cli.config.readConfig(file)).toEqual({});
  });

  it('refuses a file that is not its JSON (exit 1), saying how to start over', async () => {
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, 'svc_not_json');
    await expect(cli.config.readConfig(file)).rejects.toMatchObject({ exitCode: 1, message: `${file} is not a valid config file: run 'murmur logout', then 'murmur login'.` });
  });
});

describe('run, for what needs no network', () => {
  async function run(argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await cli.program.run(argv, {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      stdin: Readable.from([]),
      env: { MURMUR_BASE_URL: 'http://127.0.0.1:1', MURMUR_API_KEY: 'svc_x' },
      platform: 'linux',
      home: '/nonexistent',
      onInterrupt: () => () => undefined,
    });
    return { code, stdout, stderr };
  }

  it('prints help on stdout when asked (0), on stderr when no command is given (2)', async () => {
    const asked = await run(['--help']);
    expect([asked.code, asked.stderr]).toEqual([0, '']);
    expect(asked.stdout).toContain('Commands:\n  transcribe FILE|URL|-');
    expect(asked.stdout).toContain('Exit codes:\n    0  success');
    const none = await run([]);
    expect([none.code, none.stdout, none.stderr]).toEqual([2, '', asked.stdout]);
    expect((await run(['help', 'jobs', 'watch'])).stdout).toBe(cli.program.commandHelp(cli.program.COMMANDS.find((c) => c.name === 'jobs watch')!) + '\n');
    expect((await run(['recordings', '-h'])).stdout).toBe(cli.program.groupHelp('recordings') + '\n');
  });

  it('prints the package version', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    expect(pkg.bin).toEqual({ murmur: './dist/cli/main.js' });
  });

  it('checks the number of arguments and the options before calling anything', async () => {
    expect(await run(['jobs', 'get'])).toEqual({ code: 2, stdout: '', stderr: "murmur: missing ID\nRun 'murmur jobs get --help' for usage.\n" });
    expect(await run(['usage', 'now'])).toEqual({ code: 2, stdout: '', stderr: "murmur: unexpected argument 'now'\nRun 'murmur usage --help' for usage.\n" });
    expect(await run(['jobs'])).toEqual({ code: 2, stdout: '', stderr: "murmur: 'murmur jobs' needs a command: list, get, cancel, watch\nRun 'murmur jobs --help' for usage.\n" });
    expect(await run(['transcribe', 'x.wav', '--json', '--format', 'srt'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "murmur: --json prints the transcription as JSON; drop it to print --format srt\nRun 'murmur transcribe --help' for usage.\n",
    });
    expect(await run(['transcribe', '/no/such.wav'])).toEqual({ code: 2, stdout: '', stderr: "murmur: no such file: /no/such.wav\nRun 'murmur transcribe --help' for usage.\n" });
  });
});

describe('text for people', () => {
  it('aligns tables and labelled fields, and writes durations and times', () => {
    const { table, fields, duration, when, plural } = cli.output;
    expect(table(['ID', 'TITLE'], [['rec_1', 'Standup'], ['rec_22', '']])).toBe('ID      TITLE\nrec_1   Standup\nrec_22');
    expect(fields([['Status', 'completed'], ['Error', null], ['Recording', 'rec_1']])).toBe('Status     completed\nRecording  rec_1');
    expect([duration(0), duration(7.4), duration(65), duration(3600 + 61)]).toEqual(['0:00', '0:07', '1:05', '1:01:01']);
    expect([when('2025-06-01T14:03:59.000Z'), when(null)]).toEqual(['2025-06-01 14:03 UTC', '']);
    expect([plural(1, 'credit'), plural(1200, 'credit')]).toEqual(['1 credit', '1,200 credits']);
  });
});
