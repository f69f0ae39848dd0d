/**
 * The MCP AI tools run for real: the SDK's Client against the whole system with the
 * transcription (ffmpeg + pocketsphinx) and conversion services. `transcribe` of real speech as
 * base64 (plain and as a data: URL), saved and converted by recording_id; `convert` of an inline
 * transcript; every result checked against the tool's listed output schema; the one body
 * limit of /mcp, stated in the tool's description, refused as 413 `audio_too_large`; and bodies
 * over the small limit (issue 30): read on only for a transcribe or convert call its token may
 * make, while there is room, once billing admitted it — everything else refused after about
 * 1 MB, the rest unread.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ValidateFunction } from 'ajv';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { mcpResourceUrl } from '@murmur/contract';
import { wavHeader } from '@murmur/transcription';
import { librivoxUtterances } from '../../services/transcription/src/speech-fixtures';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { formatMegabytes, MCP_LARGE_BODIES_BUDGET_BYTES, MCP_MAX_AUDIO_BYTES, MCP_MAX_BASE64_CHARS, MCP_MAX_BODY_BYTES, MCP_SMALL_BODY_BYTES } from '../src/mcp/body-limit';
import { rawPost } from './support/ai-calls';
import { callTool, connectMcp, expectValidOutput, outputValidators, type Structured } from './support/mcp-client';
import { startSystem, type TestSystem } from './support/system';

const SPEECH = librivoxUtterances()[0]!;
const TRANSCRIPT =
  'Priya opened the planning meeting for the checkout redesign. We agreed to ship the new payment page in March. ' +
  'Marcus will send the revised deck to the design team by Friday. Elena needs to review the analytics dashboard before Tuesday.';

describe('MCP AI tools end to end', () => {
  let sys: TestSystem;
  let validators: Map<string, ValidateFunction>;
  const clients: Client[] = [];
  const audio = readFileSync(SPEECH.wav).toString('base64');

  /** A new user with a connected client. */
  async function newClient(email: string): Promise<{ client: Client; key: string; userId: string }> {
    const { key, user } = await sys.newUser(email);
    const client = await connectMcp(sys.baseUrl, key);
    clients.push(client);
    return { client, key, userId: user.id };
  }

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    validators = await outputValidators((await newClient('mcp-ai-schemas@example.com')).client);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sys.stop();
  });

  it('transcribes real speech sent as base64, charges by duration, and answers what the output schema promises', async () => {
    const { client } = await newClient('mcp-transcribe@example.com');
    const res = await callTool(client, 'transcribe', { audio_base64: audio, language: 'en', filename: 'speech.wav' });
    expect(res.isError).toBe(false);
    expectValidOutput(validators, 'transcribe', res.data);
    expect(res.data).toMatchObject({ object: 'transcription', language: 'en', credits_charged: 1, recording_id: null });
    expect(res.data.id).toMatch(/^trn_/);
    expect(wordErrorRate(SPEECH.text, res.data.text).wer).toBeLessThan(0.5);
    expect(res.data.segments.length).toBeGreaterThan(0);
    expect(JSON.parse(res.text)).toEqual(res.data);
    const usage = (await callTool(client, 'get_usage')).data;
    expect(usage.credits).toMatchObject({ monthly_remaining: 99, reserved: 0 });
    expect(usage.counters.transcriptions).toBe(1);
    expect(usage.rate_limit.remaining).toBe(9);
  });

  it('with a progressToken, runs the audio as a job, reports recognised seconds of the total as it goes, and answers the same transcript', async () => {
    const { client } = await newClient('mcp-progress@example.com');
    const plain = await callTool(client, 'transcribe', { audio_base64: audio, language: 'en' });
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const res = await client.callTool({ name: 'transcribe', arguments: { audio_base64: audio, language: 'en' } }, undefined, {
      onprogress: (p) => void seen.push(p),
      resetTimeoutOnProgress: true,
    });
    expect(res.isError).toBeFalsy();
    const data = res.structuredContent as Record<string, any>;
    expectValidOutput(validators, 'transcribe', data);
    expect(data.text).toBe(plain.data.text);
    expect(data.credits_charged).toBe(1);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    const last = seen[seen.length - 1]!;
    expect(last).toMatchObject({ message: 'completed' });
    expect(last.progress).toBeCloseTo(last.total!, 3);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));
    const usage = (await callTool(client, 'get_usage')).data;
    expect(usage.credits).toMatchObject({ monthly_remaining: 98, reserved: 0 });
  });

  it('gives the same words for the audio as a data:audio/wav;base64, URL', async () => {
    const { client } = await newClient('mcp-data-url@example.com');
    const plain = await callTool(client, 'transcribe', { audio_base64: audio });
    const dataUrl = await callTool(client, 'transcribe', { audio_base64: `data:audio/wav;base64,${audio}` });
    expect(dataUrl.isError).toBe(false);
    expectValidOutput(validators, 'transcribe', dataUrl.data);
    expect(dataUrl.data.text).toBe(plain.data.text);
    expect(wordErrorRate(SPEECH.text, dataUrl.data.text).wer).toBeLessThan(0.5);
  });

  it('converts an inline transcript, charging by its size', async () => {
    const { client } = await newClient('mcp-convert@example.com');
    const res = await callTool(client, 'convert', { transcript: TRANSCRIPT, kind: 'action_items' });
    expect(res.isError).toBe(false);
    expectValidOutput(validators, 'convert', res.data);
    expect(res.data).toMatchObject({ object: 'artifact', kind: 'action_items', format: 'markdown', credits_charged: 1, recording_id: null });
    expect(res.data.id).toMatch(/^art_/);
    expect(res.data.content).toContain('Marcus');
    const usage = (await callTool(client, 'get_usage')).data;
    expect(usage.credits.monthly_remaining).toBe(99);
    expect(usage.counters.conversions).toBe(1);
  });

  it('saves a transcription as a recording, then converts that recording by id and stores the artifact on it', async () => {
    const { client } = await newClient('mcp-save-convert@example.com');
    const saved = await callTool(client, 'transcribe', { audio_base64: audio, save: true, title: 'Austen, read aloud' });
    expect(saved.isError).toBe(false);
    expectValidOutput(validators, 'transcribe', saved.data);
    const recordingId = saved.data.recording_id as string;
    expect(recordingId).toMatch(/^rec_/);

    const artifact = await callTool(client, 'convert', { recording_id: recordingId, kind: 'summary', outputFormat: 'plain' });
    expect(artifact.isError).toBe(false);
    expectValidOutput(validators, 'convert', artifact.data);
    expect(artifact.data).toMatchObject({ object: 'artifact', kind: 'summary', format: 'plain', recording_id: recordingId });
    expect(artifact.data.content.length).toBeGreaterThan(0);

    const recording = (await callTool(client, 'get_recording', { recording_id: recordingId })).data;
    expect(recording).toMatchObject({ title: 'Austen, read aloud' });
    expect(recording.transcript.text).toBe(saved.data.text);
    expect(recording.artifacts.map((a: Structured) => a.id)).toContain(artifact.data.id);
    expect((await callTool(client, 'get_usage')).data.credits.monthly_remaining).toBe(98);
  });

  /** A JSON-RPC body POSTed to /mcp as it is (2025-06-18). */
  const post = async (key: string, body: Buffer) => {
    const res = await fetch(`${sys.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body,
    });
    return { status: res.status, contentType: res.headers.get('content-type'), body: (await res.json()) as Structured };
  };

  describe('the /mcp body limit', () => {
    it('states the audio limit derived from the body limit in the transcribe description and docs/mcp.md', async () => {
      const { client } = await newClient('mcp-limit-doc@example.com');
      const tool = (await client.listTools()).tools.find((t) => t.name === 'transcribe')!;
      expect(tool.description).toContain(`up to ${formatMegabytes(MCP_MAX_AUDIO_BYTES)} of audio`);
      expect(tool.description).toContain(formatMegabytes(MCP_MAX_BODY_BYTES));
      const doc = readFileSync(path.resolve(__dirname, '../../docs/mcp.md'), 'utf8').replace(/\s+/g, ' ');
      const [start, end] = [doc.indexOf('## Tools'), doc.indexOf('## Large bodies')];
      expect(start).toBeGreaterThan(-1);
      expect(end).toBeGreaterThan(start);
      const tools = doc.slice(start, end);
      expect(tools).toContain(`up to ${formatMegabytes(MCP_MAX_AUDIO_BYTES)} of audio`);
      expect(tools).toContain(`at most ${formatMegabytes(MCP_MAX_BODY_BYTES)}`);
    });

    /** The JSON-RPC text around `audio_base64` of a transcribe tools/call. */
    function envelope(args: Record<string, unknown>): { head: Buffer; tail: Buffer } {
      const marker = '@@AUDIO@@';
      const text = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'transcribe', arguments: { audio_base64: marker, ...args } } });
      const [head, tail] = text.split(marker) as [string, string];
      return { head: Buffer.from(head), tail: Buffer.from(tail) };
    }

    /** A synthetic transcribe call with `base64Chars` of base64 (all 'A': zero bytes, never decoded as audio here). */
    function transcribeCall(base64Chars: number, args: Record<string, unknown> = {}): Buffer {
      const { head, tail } = envelope(args);
      const body = Buffer.alloc(head.length + base64Chars + tail.length, 'A');
      head.copy(body, 0);
      tail.copy(body, body.length - tail.length);
      return body;
    }

    /** The call whose whole body is `bodyBytes` long. */
    function transcribeBodyOf(bodyBytes: number): Buffer {
      const { head, tail } = envelope({});
      return transcribeCall(bodyBytes - head.length - tail.length);
    }

    it('refuses a body one byte over the limit with 413 audio_too_large and the contract body, charging nothing', async () => {
      const { client, key } = await newClient('mcp-limit-over@example.com');
      const res = await post(key, transcribeBodyOf(MCP_MAX_BODY_BYTES + 1));
      expect(res.status).toBe(413);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        error: { type: 'invalid_request_error', code: 'audio_too_large', message: expect.stringContaining(formatMegabytes(MCP_MAX_AUDIO_BYTES)), param: 'audio_base64', request_id: expect.stringMatching(/^req_/) },
      });
      const usage = (await callTool(client, 'get_usage')).data;
      expect(usage.credits.monthly_remaining).toBe(100);
      expect(usage.rate_limit.remaining).toBe(10);
    });

    it('accepts a body of exactly the limit, and refuses base64 over the audio limit inside it as an audio_too_large result before transcribing', async () => {
      const { client, key } = await newClient('mcp-limit-at@example.com');
      const res = await post(key, transcribeBodyOf(MCP_MAX_BODY_BYTES));
      expect(res.status).toBe(200);
      expect(res.body.result.isError).toBe(true);
      expect(JSON.parse(res.body.result.content[0].text).error).toMatchObject({ code: 'audio_too_large', param: 'audio_base64' });
      const usage = (await callTool(client, 'get_usage')).data;
      expect(usage.credits.monthly_remaining).toBe(100);
      // Admitted before its body was read past the first megabyte: one slot of the window, no credit.
      expect(usage.rate_limit.remaining).toBe(9);
    });

    it('takes base64 of exactly the audio limit (here refused for its language, so nothing is transcribed)', async () => {
      const { key } = await newClient('mcp-limit-audio@example.com');
      const res = await post(key, transcribeCall(MCP_MAX_BASE64_CHARS, { language: 'english please' }));
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.result.content[0].text).error).toMatchObject({ code: 'invalid_request', param: 'language' });
    });
  });

  describe('a body over the small limit', () => {
    const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    /** A little more than the small limit: what the gateway reads before it decides. */
    const PAST_SMALL = MCP_SMALL_BODY_BYTES + 200_000;
    const rpcHead = (method: string, params: string) => `{"jsonrpc":"2.0","id":9,"method":"${method}","params":${params}`;
    const transcribeHead = rpcHead('tools/call', '{"name":"transcribe","arguments":{"audio_base64":"');

    /** Sends `head` and base64 text to past the small limit, of a body declared `declared` bytes (chunked when undefined), then stops sending. */
    const stalled = (key: string, head: string, declared: number | undefined, headers: Record<string, string> = {}) =>
      rawPost(sys.baseUrl, '/mcp', key, { ...MCP_HEADERS, ...headers, ...(declared === undefined ? {} : { 'content-length': String(declared) }) }, [head, 'A'.repeat(PAST_SMALL)], {
        stall: true,
      });

    async function brokeClient(email: string) {
      const c = await newClient(email);
      await sys.admin.billing.adjustCredits({ userId: c.userId, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
      return c;
    }

    it.each([
      ['declared 90 MB', 90_000_000],
      ['chunked', undefined],
    ])('refuses a ping of a key with no credits after about 1 MB, with 413 and the rest unread (%s)', async (_name, declared) => {
      const { key } = await brokeClient(`mcp-big-ping-${declared ?? 'chunked'}@example.com`);
      const res = await stalled(key, rpcHead('ping', '{"pad":"'), declared);
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('close');
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'audio_too_large', param: null, request_id: expect.stringMatching(/^req_/) });
      expect(res.body.error.message).toContain(formatMegabytes(MCP_SMALL_BODY_BYTES));
    });

    it('refuses a large transcribe call of a key with no credits with 402 once billing says so, the rest unread', async () => {
      const { client, key } = await brokeClient('mcp-big-broke@example.com');
      const res = await stalled(key, transcribeHead, 90_000_000);
      expect(res.status).toBe(402);
      expect(res.headers.connection).toBe('close');
      expect(res.body.error).toMatchObject({ type: 'billing_error', code: 'insufficient_tokens' });
      expect((await callTool(client, 'get_usage')).data.rate_limit.remaining).toBe(10);
    });

    it('refuses a large call of another tool, or one whose method comes after its arguments, with 413', async () => {
      const { key } = await newClient('mcp-big-other@example.com');
      expect((await stalled(key, rpcHead('tools/call', '{"name":"list_recordings","arguments":{"q":"'), 90_000_000)).status).toBe(413);
      const late = '{"jsonrpc":"2.0","id":9,"params":{"arguments":{"audio_base64":"';
      expect((await stalled(key, late, 90_000_000)).status).toBe(413);
    });

    /** A read-only OAuth access token of `userId` for this MCP server, minted as the app's consent screen does. */
    async function readOnlyToken(userId: string): Promise<string> {
      const redirectUri = 'http://127.0.0.1:9/callback';
      const { client } = await sys.admin.auth.registerOAuthClient({ clientName: 'read-only test', redirectUris: [redirectUri], clientUri: '', logoUri: '', scope: 'read', softwareId: '', softwareVersion: '' });
      const verifier = randomBytes(32).toString('base64url');
      const codeChallenge = createHash('sha256').update(verifier).digest('base64url');
      const resource = mcpResourceUrl(sys.baseUrl);
      const { code } = await sys.admin.auth.createAuthorizationCode({ userId, clientId: client!.clientId, clientName: 'read-only test', redirectUri, codeChallenge, scopes: ['read'], resource });
      const { tokens } = await sys.admin.auth.exchangeAuthorizationCode({ clientId: client!.clientId, code, codeVerifier: verifier, redirectUri, resource });
      return tokens!.accessToken;
    }

    it('refuses a large transcribe call of a read-only token with 403 insufficient_scope, the rest unread', async () => {
      const { userId } = await newClient('mcp-big-read-only@example.com');
      const res = await stalled(await readOnlyToken(userId), transcribeHead, 90_000_000);
      expect(res.status).toBe(403);
      expect(res.headers.connection).toBe('close');
      expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope' });
    });

    it('reads a large transcribe call on once billing admits it, transcribes the audio, and takes one slot of the window', async () => {
      const { client, key } = await newClient('mcp-big-transcribe@example.com');
      // The speech, then 25 s of silence: its base64 is past the small limit.
      const speech = readFileSync(SPEECH.wav);
      const pcm = Buffer.concat([speech.subarray(speech.indexOf('data') + 8), Buffer.alloc(800_000)]);
      const wav = Buffer.concat([wavHeader(pcm.length), pcm]);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'transcribe', arguments: { audio_base64: wav.toString('base64'), language: 'en' } } });
      expect(body.length).toBeGreaterThan(MCP_SMALL_BODY_BYTES);
      const res = await post(key, Buffer.from(body));
      expect(res.status).toBe(200);
      expect(res.body.result.isError).toBeFalsy();
      const data = res.body.result.structuredContent as Structured;
      expectValidOutput(validators, 'transcribe', data);
      expect(data).toMatchObject({ object: 'transcription', language: 'en', credits_charged: 1 });
      expect(wordErrorRate(SPEECH.text, data.text).wer).toBeLessThan(0.5);
      const usage = (await callTool(client, 'get_usage')).data;
      expect(usage.credits.monthly_remaining).toBe(99);
      expect(usage.rate_limit.remaining).toBe(9);
    });

    it('reads a large convert call on once billing admits it (here refused by the plan for its length), taking one slot', async () => {
      const { client, key } = await newClient('mcp-big-convert@example.com');
      const transcript = 'We agreed to ship the new payment page in March. '.repeat(Math.ceil((MCP_SMALL_BODY_BYTES + 1000) / 49));
      const res = await post(key, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'convert', arguments: { transcript, kind: 'summary' } } })));
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.result.content[0].text).error).toMatchObject({ code: 'invalid_request', param: 'transcript' });
      expect((await callTool(client, 'get_usage')).data.rate_limit.remaining).toBe(9);
    });

    it('holds at most its budget of large bodies at once: one more gets 503 with Retry-After, before billing; room comes back when one ends', async () => {
      const { client, key } = await newClient('mcp-big-budget@example.com');
      const { key: brokeKey } = await brokeClient('mcp-big-budget-broke@example.com');
      // Bodies of the largest size, admitted and left waiting for their rest, fill the budget.
      const holders = Array.from({ length: MCP_LARGE_BODIES_BUDGET_BYTES / MCP_MAX_BODY_BYTES }, () => {
        const req = http.request(`${sys.baseUrl}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, 'content-length': String(MCP_MAX_BODY_BYTES) }, agent: false });
        req.on('error', () => {});
        req.write(transcribeHead);
        req.write('A'.repeat(PAST_SMALL));
        return req;
      });
      try {
        for (let i = 0; i < 400 && (await callTool(client, 'get_usage')).data.rate_limit.remaining > 10 - holders.length; i++) await new Promise((r) => setTimeout(r, 25));
        expect((await callTool(client, 'get_usage')).data.rate_limit.remaining).toBe(10 - holders.length);
        const busy = await stalled(brokeKey, transcribeHead, 2_000_000);
        expect(busy.status).toBe(503);
        expect(busy.headers['retry-after']).toBe('5');
        expect(busy.headers.connection).toBe('close');
        expect(busy.body.error).toMatchObject({ code: 'service_unavailable' });
      } finally {
        for (const req of holders) req.destroy();
      }
      // Their room is given back when they end: the next large call gets as far as billing.
      let next = await stalled(brokeKey, transcribeHead, 2_000_000);
      for (let i = 0; i < 100 && next.status === 503; i++) next = await stalled(brokeKey, transcribeHead, 2_000_000);
      expect(next.status).toBe(402);
    });
  });
});
