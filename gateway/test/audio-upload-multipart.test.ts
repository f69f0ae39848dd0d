/**
 * parseAudioUpload with multipart/form-data bodies (streamed node:http and fetch FormData), other
 * content types and empty bodies: every accepted form and every refusal.
 * The server and clients are in support/upload-server.ts.
 */
import { randomBytes } from 'node:crypto';
import { MULTIPART, multipartBody, postMultipart, send, sha256, uploadUrl, useUploadServer, type Part } from './support/upload-server';

useUploadServer();

const audio = randomBytes(300 * 1024 + 2); // not a multiple of 3: the base64 ends in padding

describe('multipart/form-data', () => {
  it('streams the file part byte for byte with the options sent before it', async () => {
    const res = await postMultipart([
      { name: 'language', value: 'en' },
      { name: 'response_format', value: 'srt' },
      { name: 'save', value: '1' },
      { name: 'title', value: 'Ünïcödé standup' },
      { name: 'folder_id', value: 'fld_123' },
      { name: 'audio', filename: 'stándup.mp3', type: 'audio/mpeg', data: audio },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      bytes: audio.length,
      sha256: sha256(audio),
      fields: { language: 'en', response_format: 'srt', save: true, title: 'Ünïcödé standup', folder_id: 'fld_123' },
      filename: 'stándup.mp3',
      content_type: 'audio/mpeg',
    });
  });

  it('accepts a FormData body sent by fetch', async () => {
    const form = new FormData();
    form.append('save', 'false');
    form.append('response_format', 'vtt');
    form.append('audio', new Blob([audio], { type: 'audio/ogg' }), 'memo.ogg');
    const res = await fetch(uploadUrl(), { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      bytes: audio.length,
      sha256: sha256(audio),
      fields: { save: false, response_format: 'vtt' },
      filename: 'memo.ogg',
      content_type: 'audio/ogg',
    });
  });

  it.each([
    ['save=true', 'save', 'true', { save: true }],
    ['language=de', 'language', 'de', { language: 'de' }],
    ['response_format=srt', 'response_format', 'srt', { response_format: 'srt' }],
    ['an empty title', 'title', '', {}],
  ])('accepts an option after the file, in the fields once the audio has ended (%s)', async (_name, field, value, fields) => {
    const res = await postMultipart([{ name: 'audio', data: audio }, { name: field, value }]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sha256: sha256(audio) });
    expect(res.body.fields).toEqual(fields);
  });

  const refusals: Array<[string, Part[], number, string, string | null]> = [
    ['a bad option after the file', [{ name: 'audio', data: audio }, { name: 'response_format', value: 'pdf' }], 400, 'invalid_request', 'response_format'],
    ['an option before and after the file', [{ name: 'language', value: 'en' }, { name: 'audio', data: audio }, { name: 'language', value: 'de' }], 400, 'invalid_request', 'language'],
    ['only options, no file', [{ name: 'language', value: 'en' }], 400, 'missing_audio', 'audio'],
    ['an empty file', [{ name: 'audio', data: Buffer.alloc(0) }], 400, 'missing_audio', 'audio'],
    ['`audio` sent as a text field', [{ name: 'audio', value: 'standup.mp3' }], 400, 'invalid_request', 'audio'],
    ['a second file', [{ name: 'audio', data: audio }, { name: 'audio', data: audio }], 400, 'invalid_request', 'audio'],
    ['a file under another name', [{ name: 'recording', data: audio }], 400, 'invalid_request', 'recording'],
    ['an unknown option', [{ name: 'speed', value: '2' }, { name: 'audio', data: audio }], 400, 'invalid_request', 'speed'],
    ['`audio_base64` in a form', [{ name: 'audio_base64', value: 'QQ==' }], 400, 'invalid_request', 'audio_base64'],
    ['save=maybe', [{ name: 'save', value: 'maybe' }, { name: 'audio', data: audio }], 400, 'invalid_request', 'save'],
    ['response_format=pdf', [{ name: 'response_format', value: 'pdf' }, { name: 'audio', data: audio }], 400, 'invalid_request', 'response_format'],
    ['an option given twice', [{ name: 'language', value: 'en' }, { name: 'language', value: 'fr' }, { name: 'audio', data: audio }], 400, 'invalid_request', 'language'],
    ['an option over 16 KiB', [{ name: 'title', value: 't'.repeat(17 * 1024) }, { name: 'audio', data: audio }], 400, 'invalid_request', 'title'],
  ];

  it.each(refusals)('refuses %s', async (_name, parts, status, code, param) => {
    const res = await postMultipart(parts);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, param });
  });

  it('refuses a multipart Content-Type without a boundary', async () => {
    const res = await send([multipartBody([{ name: 'audio', data: audio }])], { 'content-type': 'multipart/form-data' });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request', param: null, message: expect.stringMatching(/boundary/) } });
  });

  it('fails the audio of a form that ends before its closing boundary', async () => {
    const body = multipartBody([{ name: 'audio', data: audio }]);
    const res = await send([body.subarray(0, body.length - 40)], { 'content-type': MULTIPART });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request', param: null } });
  });
});

describe('content types and empty bodies', () => {
  it.each(['text/plain', 'audio/mpeg', 'application/x-www-form-urlencoded'])('refuses %s with invalid_request (not 415)', async (type) => {
    const res = await send([audio], { 'content-type': type, 'content-length': audio.length });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request', param: null } });
    expect(res.body.message).toMatch(/multipart\/form-data with a file field `audio`.*application\/json with `audio_base64`/);
  });

  it('refuses a body without a Content-Type with invalid_request', async () => {
    const res = await send([audio], { 'content-length': audio.length });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it.each([
    ['no Content-Type', {}],
    ['application/json', { 'content-type': 'application/json' }],
    ['multipart/form-data', { 'content-type': MULTIPART }],
  ])('answers missing_audio to an empty body with %s', async (_name, headers) => {
    const res = await send([], { ...headers, 'content-length': 0 });
    expect(res).toMatchObject({ status: 400, body: { code: 'missing_audio' } });
  });

  it('answers missing_audio to an empty chunked JSON body', async () => {
    const res = await send([], { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    expect(res).toMatchObject({ status: 400, body: { code: 'missing_audio' } });
  });
});
