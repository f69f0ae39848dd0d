/**
 * Issue 11 item 2: every option of a transcription is checked before any paid work — by the
 * library's own rules for what it stores (kit's text-rules) — so a request the library would
 * refuse after the transcription (a title with NUL, an over-long title) is refused before it,
 * over REST (options before or after the audio) and over the MCP `transcribe` tool, and the
 * user's credits and ledger do not move.
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
