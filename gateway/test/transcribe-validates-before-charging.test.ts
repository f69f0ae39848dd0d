/**
 * Issue 11 item 2: every option of a transcription is checked before any paid work — by the
 * library's own rules for what it stores (kit's text-rules) — so a request the library would
 * refuse after the transcription (a title with NUL, an over-long title) is refused before it,
 * over REST (options before or after the audio) and over the MCP `transcribe` tool, and the
 * user's credits and ledger do not move. Issue 30: the same for bytes that are not UTF-8 in a
 * JSON or multipart string (they were read as U+FFFD and the call charged), on every AI body.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FORM_TYPE, SPEECH_WAV, creditsOf, formBody, rawPost, type FormPart } from './support/ai-calls';
import { startSystem, type TestSystem } from './support/system';

describe('options are validated before anything is charged', () => {
  let sys: TestSystem;
  let key: string;
  let userId: string;
  let mcp: Client;
  const speech = readFileSync(SPEECH_WAV);
  const audio: FormPart = { name: 'audio', file: speech };

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    const u = await sys.newUser('validates@example.com');
    key = u.key;
    userId = u.user.id;
    mcp = new Client({ name: 'murmur-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${sys.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  });
  afterAll(async () => {
    await mcp.close();
    await sys.stop();
  });

  const form = (parts: FormPart[]) => rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': FORM_TYPE }, [formBody(parts)]);

  const refusals: Array<[string, FormPart[], string]> = [
    ['a title with NUL, before the audio', [{ name: 'save', value: 'true' }, { name: 'title', value: 'Stand\u0000up' }, audio], 'title'],
    ['a title with NUL, after the audio', [{ name: 'save', value: 'true' }, audio, { name: 'title', value: 'Stand\u0000up' }], 'title'],
    ['a title over 500 characters', [{ name: 'save', value: 'true' }, { name: 'title', value: 'é'.repeat(501) }, audio], 'title'],
    ['a title without save, save never coming', [audio, { name: 'title', value: 'Standup' }], 'title'],
  ];

  it.each(refusals)('REST: refuses %s with 400 and charges nothing', async (_name, parts, param) => {
    const before = await creditsOf(sys, userId);
    const res = await form(parts);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', param });
    expect(await creditsOf(sys, userId)).toEqual(before);
  });

  it('REST: a folder of nobody, after the audio, is 404 and charges nothing', async () => {
    const before = await creditsOf(sys, userId);
    const res = await form([audio, { name: 'save', value: 'true' }, { name: 'folder_id', value: 'fld_0000000000000000000000' }]);
    expect(res.status).toBe(404);
    expect(await creditsOf(sys, userId)).toEqual(before);
  });

  it('MCP: the transcribe tool refuses a title with NUL as invalid_request and charges nothing', async () => {
    const before = await creditsOf(sys, userId);
    const res = await mcp.callTool({ name: 'transcribe', arguments: { audio_base64: speech.toString('base64'), save: true, title: 'Stand\u0000up' } });
    expect(res.isError).toBe(true);
    const body = JSON.parse((res.content as Array<{ text: string }>)[0]!.text);
    expect(body.error).toMatchObject({ code: 'invalid_request', param: 'title' });
    expect(await creditsOf(sys, userId)).toEqual(before);
  });

  describe('bytes that are not UTF-8 in a string', () => {
    /** `Stand` + bytes that are never UTF-8 + `up`. */
    const badTitle = Buffer.concat([Buffer.from('Stand'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('up')]);
    const json = (before: string, bad: Buffer, after: string) => Buffer.concat([Buffer.from(before), bad, Buffer.from(after)]);
    let other: { key: string; userId: string };

    beforeAll(async () => {
      // Their own user: these calls take slots of the 10-a-minute window too.
      const u = await sys.newUser('validates-utf8@example.com');
      other = { key: u.key, userId: u.user.id };
    });

    const cases: Array<[string, () => { path: string; headers: Record<string, string>; body: Buffer }, string]> = [
      ['a multipart title before the audio', () => ({ path: '/api/v1/transcribe', headers: { 'content-type': FORM_TYPE }, body: formBody([{ name: 'save', value: 'true' }, { name: 'title', value: badTitle }, audio]) }), 'title'],
      ['a multipart title after the audio', () => ({ path: '/api/v1/transcribe', headers: { 'content-type': FORM_TYPE }, body: formBody([{ name: 'save', value: 'true' }, audio, { name: 'title', value: badTitle }]) }), 'title'],
      [
        'a JSON title after the audio',
        () => ({ path: '/api/v1/transcribe', headers: { 'content-type': 'application/json' }, body: json(`{"save":true,"audio_base64":"${speech.toString('base64')}","title":"`, badTitle, '"}') }),
        'title',
      ],
      ['a job’s JSON title', () => ({ path: '/api/v1/transcriptions', headers: { 'content-type': 'application/json' }, body: json('{"save":true,"title":"', badTitle, `","audio_base64":"${speech.toString('base64')}"}`) }), 'title'],
      ['a transcript to convert', () => ({ path: '/api/v1/convert', headers: { 'content-type': 'application/json' }, body: json('{"kind":"summary","transcript":"We agreed to ship. ', badTitle, '"}') }), 'transcript'],
      [
        'an MCP transcribe title',
        () => ({
          path: '/mcp',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: json(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"transcribe","arguments":{"audio_base64":"${speech.toString('base64')}","save":true,"title":"`, badTitle, '"}}}'),
        }),
        'params.arguments.title',
      ],
    ];

    it.each(cases)('refuses %s with 400 naming it, and charges nothing', async (_name, make, param) => {
      const { path, headers, body } = make();
      const before = await creditsOf(sys, other.userId);
      const res = await rawPost(sys.baseUrl, path, other.key, { ...headers, 'content-length': String(body.length) }, [body]);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', param });
      expect(res.body.error.message).toMatch(/UTF-8/);
      expect(await creditsOf(sys, other.userId)).toEqual(before);
    });
  });

  it('stays healthy: the same request with a clean title is saved and charged once', async () => {
    const before = await creditsOf(sys, userId);
    const res = await form([{ name: 'save', value: 'true' }, audio, { name: 'title', value: '  Standup  ' }]);
    expect(res.status).toBe(200);
    expect(res.body.recording_id).toMatch(/^rec_/);
    const { recording } = await sys.admin.library.getRecording({ ownerId: userId, recordingId: res.body.recording_id });
    expect(recording?.title).toBe('Standup');
    const after = await creditsOf(sys, userId);
    expect(after.creditsUsed).toBe(before.creditsUsed + res.body.credits_charged);
  });
});
