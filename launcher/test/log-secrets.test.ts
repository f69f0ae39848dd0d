/**
 * No secret in any process's log lines (support/log-secrets.ts): first the check itself, which
 * must find a planted leak of each kind; then the whole system as child processes at
 * LOG_LEVEL=debug (every line a process can print), driven once through every path that handles
 * a secret — an API key (and an unknown one), a webhook signing secret and a delivery signed
 * with it, a sign-in token and the session it starts, an OAuth code with its access and refresh
 * tokens, an `audio_url` with credentials (refused) and one fetched, the transcription of known
 * speech (synchronous, as a job, and over MCP) and a conversion of a known text — and then every
 * line of every process is searched.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin } from '@murmur/app';
import { startProcessStack, SERVICES, type ProcessStack } from './support/process-stack';
import { eventually } from './support/eventually';
import { knownSecrets, secretLeaks, SPOKEN_WORDS } from './support/log-secrets';

type Json = Record<string, any>;

/** "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them". */
const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
/** A text to convert, with words no log line has any reason to hold. */
const CONVERT_TEXT = 'Priyanka will send the quarterly marmalade budget to Thaddeus by Thursday. We agreed to ship the zeppelin in March.';
const CONVERT_WORDS = ['priyanka', 'marmalade', 'thaddeus', 'zeppelin'];
/** The password sent inside an audio_url. */
const URL_PASSWORD = 'Hunter2-never-logged';

describe('the log secrets check', () => {
  const hex = randomBytes(32).toString('hex');
  const b64 = randomBytes(32).toString('base64url');
  const planted: Array<[string, string]> = [
    ['an API key', `[gateway      ] {"level":"info","msg":"verified","key":"svc_${hex}"}`],
    ['a webhook signing secret', `[transcription] {"level":"debug","secret":"whsec_${randomBytes(32).toString('base64')}"}`],
    ['a sign-in token', `[auth         ] {"msg":"link","token":"sit_${b64}"}`],
    ['a session token', `[app          ] {"msg":"cookie sst_${b64}"}`],
    ['an OAuth authorization code', `[auth         ] {"code":"mac_${b64}"}`],
    ['an OAuth access token', `[gateway      ] {"authorization":"Bearer mat_${b64}"}`],
    ['an OAuth refresh token', `[auth         ] {"refresh":"mrt_${b64}"}`],
    ['credentials in a URL', `[gateway      ] {"audio_url":"https://bob:${URL_PASSWORD}@files.example.com/a.wav"}`],
    ['a value the test named', `[gateway      ] {"msg":"fetch failed: ${URL_PASSWORD}"}`],
    ['transcript words ("leisure")', `[transcription] {"msg":"chunk","text":"and mister john had then Leisure to consider"}`],
  ];

  it.each(planted)('finds %s in a process line, and names the process without repeating the secret', (kind, line) => {
    const known = knownSecrets();
    known.values.push(URL_PASSWORD);
    const leaks = secretLeaks([line], known);
    expect(leaks.some((l) => l.includes(kind))).toBe(true);
    expect(leaks[0]).toMatch(/^(gateway|transcription|auth|app): /);
    for (const l of leaks) expect(l).not.toMatch(/svc_[0-9a-f]{64}|whsec_[A-Za-z0-9+/]{16}|(sit|sst|mac|mat|mrt)_[A-Za-z0-9_-]{43}|Hunter2/);
  });

  it('passes what a process may print: ids, masked keys, its own messages; the launcher’s words to its user are not logs', () => {
    const lines = [
      '[auth         ] {"level":"info","msg":"api key created","key_id":"key_4f3a2b1c0d9e8f7a6b5c","key":"svc_1a2b…9f0e"}',
      '[gateway      ] {"level":"info","msg":"request","path":"/api/v1/me","status":200,"request_id":"req_0123456789abcdef"}',
      '[transcription] {"level":"info","msg":"transcription job completed","job_id":"trn_0123456789abcdefghij","total_ms":812}',
      '[gateway      ] {"msg":"audio_url refused","why":"carries a user name or password","host":"files.example.com"}',
      `  MURMUR_API_KEY=svc_${hex}`,
    ];
    expect(secretLeaks(lines)).toEqual([]);
  });
});

describe("every process's log lines, with every secret handled once", () => {
  let stack: ProcessStack;
  let receiver: http.Server;
  let files: http.Server;
  const deliveries: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  /** Transcripts the system returned: their words must be in no log line. */
  const transcripts: string[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    files = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(fs.readFileSync(WAV)));
    await Promise.all([receiver, files].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
    const hooks = (receiver.address() as AddressInfo).port;
    const filesPort = (files.address() as AddressInfo).port;
    stack = await startProcessStack({
      env: {
        LOG_LEVEL: 'debug',
        MURMUR_WEBHOOK_ALLOW_HTTP: 'true',
        MURMUR_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32',
        MURMUR_WEBHOOK_PORTS: `80,443,${hooks}`,
        MURMUR_AUDIO_URL_ALLOW_CIDRS: '127.0.0.1/32',
        MURMUR_AUDIO_URL_PORTS: `80,443,${filesPort}`,
      },
    });
    stack.secrets.words.push(...CONVERT_WORDS);
    stack.secrets.values.push(URL_PASSWORD);
  }, 300_000);

  afterAll(async () => {
    // stop() fails on any secret printed up to the last line (support/process-stack.ts).
    await stack?.stop();
    await Promise.all([receiver, files].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  it('handles keys, a webhook secret, sign-in and OAuth tokens, credentials in a URL and known speech, and no line of any process carries one', async () => {
    const { clients, base } = stack;
    const email = 'secrets@example.com';
    const user = await admin.createUser(clients, email, 'Secrets', 'pro');
    const key = (await admin.createKey(clients, email, '90')).key;
    const revoked = await admin.createKey(clients, email, '90', 'old');
    await admin.revokeKey(clients, revoked.apiKey!.id);
    const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
    stack.secrets.values.push(key, revoked.key);

    // Keys: a good one, a revoked one, an unknown one.
    expect((await fetch(`${base}/api/v1/me`, { headers: bearer(key) })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/me`, { headers: bearer(revoked.key) })).status).toBe(401);
    expect((await fetch(`${base}/api/v1/me`, { headers: bearer(`svc_${randomBytes(32).toString('hex')}`) })).status).toBe(401);

    // Known speech, synchronously: the transcript holds the recording's distinctive word.
    const form = () => {
      const f = new FormData();
      f.append('audio', new Blob([fs.readFileSync(WAV)], { type: 'audio/wav' }), 'speech.wav');
      return f;
    };
    const sync = (await (await fetch(`${base}/api/v1/transcribe`, { method: 'POST', headers: bearer(key), body: form() })).json()) as Json;
    transcripts.push(sync.text);
    expect(sync.text.toLowerCase().split(/\W+/)).toEqual(expect.arrayContaining(['leisure']));

    // A webhook signing secret, and a job whose completed event is signed with it.
    const { secret } = await clients.transcription.rotateWebhookSecret({ userId: user.id });
    stack.secrets.values.push(secret);
    const withHook = form();
    withHook.append('webhook_url', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`);
    const job = (await (await fetch(`${base}/api/v1/transcriptions`, { method: 'POST', headers: bearer(key), body: withHook })).json()) as Json;
    const read = async () => (await (await fetch(`${base}/api/v1/transcriptions/${job.id}`, { headers: bearer(key) })).json()) as Json;
    const delivered = await eventually(read, (j) => j.webhook?.state === 'delivered', 'the webhook delivery', 180_000, 200);
    transcripts.push(delivered.text);
    expect(deliveries).toHaveLength(1);

    // audio_url: one with credentials (refused), one fetched from a server on loopback.
    const filesUrl = `127.0.0.1:${(files.address() as AddressInfo).port}/speech.wav`;
    const withCredentials = await fetch(`${base}/api/v1/transcribe`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ audio_url: `http://murmur-user:${URL_PASSWORD}@${filesUrl}` }),
    });
    expect([withCredentials.status, ((await withCredentials.json()) as Json).error.code]).toEqual([400, 'audio_url_forbidden']);
    const fetched = await fetch(`${base}/api/v1/transcribe`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ audio_url: `http://${filesUrl}` }) });
    expect(fetched.status).toBe(200);
    transcripts.push(((await fetched.json()) as Json).text);

    // MCP: a transcription of base64 audio and a conversion of a known text.
    const mcp = (name: string, args: Json) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      }).then(async (r) => ((await r.json()) as Json).result);
    const spoken = await mcp('transcribe', { audio_base64: `data:audio/wav;base64,${fs.readFileSync(WAV).toString('base64')}` });
    expect(spoken.isError).toBeFalsy();
    transcripts.push(spoken.structuredContent.text);
    const converted = await fetch(`${base}/api/v1/convert`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ transcript: CONVERT_TEXT, kind: 'summary' }) });
    expect(converted.status).toBe(200);

    // A sign-in link's token and the session it starts, read and ended.
    const { token: signIn } = await clients.auth.createSignInLink({ userId: user.id });
    const { sessionToken } = await clients.auth.startSession({ signInToken: signIn });
    await clients.auth.getSession({ sessionToken });
    await clients.auth.endSession({ sessionToken });
    stack.secrets.values.push(signIn, sessionToken);

    // OAuth: a client, a code (PKCE), its tokens, a refresh, a call to /mcp, a revocation.
    const redirect = 'http://127.0.0.1:9/callback';
    const { client } = await clients.auth.registerOAuthClient({ clientName: 'Secrets test', redirectUris: [redirect], clientUri: '', logoUri: '', scope: '', softwareId: '', softwareVersion: '' });
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier, 'ascii').digest('base64url');
    const resource = `${base}/mcp`;
    const { code } = await clients.auth.createAuthorizationCode({ userId: user.id, clientId: client!.clientId, clientName: 'Secrets test', redirectUri: redirect, codeChallenge: challenge, scopes: ['read', 'ai'], resource });
    const { tokens } = await clients.auth.exchangeAuthorizationCode({ clientId: client!.clientId, code, codeVerifier: verifier, redirectUri: redirect, resource });
    const { tokens: refreshed } = await clients.auth.exchangeRefreshToken({ clientId: client!.clientId, refreshToken: tokens!.refreshToken, scopes: [], resource });
    stack.secrets.values.push(code, tokens!.accessToken, tokens!.refreshToken, refreshed!.accessToken, refreshed!.refreshToken);
    await fetch(`${base}/mcp`, { method: 'POST', headers: { ...bearer(refreshed!.accessToken), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    await clients.auth.revokeOAuthToken({ clientId: client!.clientId, token: refreshed!.refreshToken });

    // What is searched for is really there to be searched: known words in the transcripts, and
    // the structured lines of every process (at debug, nothing is held back).
    for (const t of transcripts) expect(t.toLowerCase()).toMatch(new RegExp(`\\b(${SPOKEN_WORDS.join('|')})\\b`));
    for (const name of [...SERVICES, 'gateway']) expect([name, stack.lines.some((l) => l.startsWith(`[${name}`) && l.includes('"level":"info"'))]).toEqual([name, true]);
    expect(secretLeaks(stack.lines, stack.secrets)).toEqual([]);
  }, 300_000);
});
