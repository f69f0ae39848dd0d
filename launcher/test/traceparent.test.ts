/**
 * `traceparent` on every response with no OTEL_* variable set (DESIGN.md §1): tracing is set up
 * per process at start, so the system runs as `npm start` runs it — the built launcher as a
 * child process, on free ports, with a scratch data folder — and this test reads the key its
 * first run prints. REST and /mcp, successes and errors, with and without an incoming
 * `traceparent` (whose trace id must be kept, with the gateway's own span as parent id).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '@murmur/kit/testing';
import { assertNoSecretsLogged, processLines } from './support/log-secrets';

const ROOT = path.resolve(__dirname, '..', '..');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_PARENT = '00f067aa0ba902b7';

describe('traceparent with no exporter configured', () => {
  let launcher: ChildProcess;
  let dataDir: string;
  let base: string;
  let key: string;
  /** Everything the launcher printed, its processes' lines among it. */
  let out = '';

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'murmur-traceparent-'));
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
    const addr = async () => `127.0.0.1:${await freePort()}`;
    Object.assign(env, {
      AUTH_ADDR: await addr(),
      BILLING_ADDR: await addr(),
      LIBRARY_ADDR: await addr(),
      TRANSCRIPTION_ADDR: await addr(),
      CONVERSION_ADDR: await addr(),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      GRPC_LISTEN_ADDR: '',
      LOG_LEVEL: 'warn',
      // A fresh embedded store, so the first run creates the demo user and prints its key.
      DATABASE_URL: '',
      REDIS_URL: '',
      MURMUR_DATA_DIR: dataDir,
    });
    base = `http://localhost:${env.PORT}`;
    // Its own process group, so afterAll stops every process it started.
    launcher = spawn(process.execPath, [path.join(ROOT, 'launcher/dist/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    key = await new Promise<string>((resolve, reject) => {
      launcher.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const printed = /MURMUR_API_KEY=(svc_[0-9a-f]{64})/.exec(out);
        if (printed) resolve(printed[1]!);
      });
      launcher.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      launcher.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${out}`)));
    });
  }, 180_000);

  afterAll(async () => {
    if (launcher?.exitCode === null) {
      const exited = new Promise((resolve) => launcher.once('exit', resolve));
      process.kill(-launcher.pid!, 'SIGTERM');
      await exited;
    }
    try {
      process.kill(-launcher.pid!, 'SIGKILL'); // anything a failed launcher left behind
    } catch {
      // ESRCH: the whole group has ended
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    assertNoSecretsLogged(processLines(out));
  });

  const auth = () => ({ authorization: `Bearer ${key}` });
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  const toolCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_folders', arguments: {} } });

  /** Every kind of answer: REST and /mcp, success, 401 and 404. */
  const calls: Array<[string, number, (headers: Record<string, string>) => Promise<Response>]> = [
    ['GET /api/v1/me', 200, (h) => fetch(`${base}/api/v1/me`, { headers: { ...auth(), ...h } })],
    ['GET /api/v1/me without a key', 401, (h) => fetch(`${base}/api/v1/me`, { headers: h })],
    ['GET /api/v1/recordings/rec_unknown', 404, (h) => fetch(`${base}/api/v1/recordings/rec_0000000000000000000000`, { headers: { ...auth(), ...h } })],
    ['GET an unknown route', 404, (h) => fetch(`${base}/api/v1/nothing-here`, { headers: { ...auth(), ...h } })],
    ['POST /mcp tools/call', 200, (h) => fetch(`${base}/mcp`, { method: 'POST', headers: { ...auth(), ...mcpHeaders, ...h }, body: toolCall })],
    ['POST /mcp without a key', 401, (h) => fetch(`${base}/mcp`, { method: 'POST', headers: { ...mcpHeaders, ...h }, body: toolCall })],
  ];

  it.each(calls)('%s answers %i with a traceparent of a new trace', async (_name, status, send) => {
    const [first, second] = [await send({}), await send({})];
    for (const res of [first, second]) {
      expect(res.status).toBe(status);
      expect(res.headers.get('traceparent')).toMatch(TRACEPARENT);
    }
    const [, traceA, spanA] = TRACEPARENT.exec(first.headers.get('traceparent')!)!;
    const [, traceB] = TRACEPARENT.exec(second.headers.get('traceparent')!)!;
    expect(traceA).not.toBe(traceB);
    expect(traceA).not.toMatch(/^0+$/);
    expect(spanA).not.toMatch(/^0+$/);
  });

  it.each(calls)('%s answers %i in the caller’s trace, with the gateway’s span as parent', async (_name, status, send) => {
    const res = await send({ traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01` });
    expect(res.status).toBe(status);
    const [, traceId, parentId, flags] = TRACEPARENT.exec(res.headers.get('traceparent') ?? '') ?? [];
    expect(traceId).toBe(INCOMING_TRACE);
    expect(parentId).toMatch(/^[0-9a-f]{16}$/);
    expect(parentId).not.toBe(INCOMING_PARENT);
    expect(parentId).not.toMatch(/^0+$/);
    // Nothing exports, so nothing is recorded, and the flag says so (docs/decisions/0012-tracing.md).
    expect(flags).toBe('00');
  });
});
