/**
 * Issue 11 item 1: bodies of POST /transcribe that are cut short or malformed — a truncated
 * JSON object, a few bytes of base64, audio with a bad option after it, a multipart body
 * without its closing boundary — are answered at once with the contract's error (they hung:
 * an upload failing before its consumer attached lost its error), nothing is charged, and the
 * next normal request succeeds.
 */
import { readFileSync } from 'node:fs';
import { FORM_TYPE, SPEECH_WAV, creditsOf, formBody, rawPost } from './support/ai-calls';
import { startSystem, type TestSystem } from './support/system';

describe('POST /transcribe with a body cut short or malformed', () => {
  let sys: TestSystem;
  let key: string;
  let userId: string;
  const speech = readFileSync(SPEECH_WAV);
  const json = { 'content-type': 'application/json' };
  const post = (headers: Record<string, string>, body: string | Buffer, chunked = false) =>
    rawPost(sys.baseUrl, '/api/v1/transcribe', key, chunked ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, [body]);

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    const u = await sys.newUser('cut-bodies@example.com');
    key = u.key;
    userId = u.user.id;
  });
  afterAll(async () => {
    await sys.stop();
  });

  const cases: Array<[string, Record<string, string>, () => string | Buffer, boolean, number, string, string | null]> = [
    ['a truncated JSON object', json, () => '{"audio_base64": "AAAA', false, 400, 'invalid_request', null],
    ['a truncated JSON object, chunked', json, () => '{"audio_base64": "AAAA', true, 400, 'invalid_request', null],
    ['three bytes of base64 audio', json, () => '{"audio_base64":"AAAA"}', false, 415, 'unsupported_audio', 'audio'],
    ['three bytes of base64 audio, chunked', json, () => '{"audio_base64":"AAAA"}', true, 415, 'unsupported_audio', 'audio'],
    [
      'a few KB of audio followed by a bad option',
      json,
      () => `{"audio_base64":"${speech.subarray(0, 6000).toString('base64')}","response_format":"pdf"}`,
      false,
      400,
      'invalid_request',
      'response_format',
    ],
    [
      'a few KB of audio followed by an unknown field',
      json,
      () => `{"audio_base64":"${speech.subarray(0, 6000).toString('base64')}","speed":2}`,
      false,
      400,
      'invalid_request',
      'speed',
    ],
    [
      'a multipart body whose audio part has no closing boundary',
      { 'content-type': FORM_TYPE },
      () => formBody([{ name: 'audio', file: speech.subarray(0, 6000) }], false),
      false,
      400,
      'invalid_request',
      null,
    ],
  ];

  it.each(cases)('answers %s with the contract error and charges nothing', async (_name, headers, body, chunked, status, code, param) => {
    const before = await creditsOf(sys, userId);
    const res = await post(headers, body(), chunked);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ code, param });
    expect(res.body.error.request_id).toMatch(/^req_/);
    expect(await creditsOf(sys, userId)).toEqual(before);
  });

  it('answers a few KB of audio with an option after it (it used to hang)', async () => {
    const res = await post(json, `{"audio_base64":"${speech.subarray(0, 6000).toString('base64')}","language":"en"}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'transcription', language: 'en' });
  });

  it('stays healthy: a whole file is transcribed and charged once, and the credits reconcile', async () => {
    const before = await creditsOf(sys, userId);
    const res = await post(json, JSON.stringify({ audio_base64: speech.toString('base64') }));
    expect(res.status).toBe(200);
    const after = await creditsOf(sys, userId);
    expect(after.monthlyRemaining).toBe(before.monthlyRemaining - res.body.credits_charged);
    expect(after.creditsUsed).toBe(before.creditsUsed + res.body.credits_charged);
  });
});
