/**
 * parseAudioUpload with JSON bodies: base64 audio decoded as a stream in any split, options before
 * the audio, every accepted encoding and every refusal.
 * The server and clients are in support/upload-server.ts.
 */
import { randomBytes } from 'node:crypto';
import { pieces, postJson, send, sha256, useUploadServer } from './support/upload-server';

useUploadServer();

const audio = randomBytes(300 * 1024 + 2); // not a multiple of 3: the base64 ends in padding

describe('application/json', () => {
  const b64 = audio.toString('base64');
  const sample = audio.subarray(0, 20_002); // small enough to send a byte at a time
  const sampleB64 = sample.toString('base64');
  const variants: Array<[string, string]> = [
    ['plain', JSON.stringify({ language: 'en', save: true, audio_base64: sampleB64 })],
    [
      'escaped, data-URL prefixed and wrapped',
      `{"title":"caf\\u00e9 \\"notes\\"","audio_base64":"data:audio/webm;base64,${sampleB64
        .replace(/(.{76})/g, '$1\\r\\n')
        .replace(/\//g, '\\/')
        .replace(/A/g, '\\u0041')}"}`,
    ],
  ];
  const sizes = [1, 3, 4, 1000];
  const cases = variants.flatMap(([name, body]) => sizes.map((size) => [name, size, body] as const));

  it.each(cases)('decodes the %s body identically when written in %i-byte pieces', async (_name, size, body) => {
    const res = await postJson(body, size);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: sample.length, sha256: sha256(sample) });
  });

  it('resolves with the options before the audio, the data URL type, and the file name "audio"', async () => {
    const res = await postJson(
      JSON.stringify({ language: 'fr', response_format: 'text', save: false, title: 'Réunion', folder_id: 'fld_9', audio_base64: `data:audio/mpeg;base64,${b64}` }),
    );
    expect(res.body).toEqual({
      bytes: audio.length,
      sha256: sha256(audio),
      fields: { language: 'fr', response_format: 'text', save: false, title: 'Réunion', folder_id: 'fld_9' },
      filename: 'audio',
      content_type: 'audio/mpeg',
    });
  });

  it('takes options after audio_base64 too: they are in the fields once the audio has ended', async () => {
    const res = await postJson(JSON.stringify({ save: true, audio_base64: b64, language: 'de', response_format: 'srt', title: 'Notiz' }), 4096);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: audio.length, sha256: sha256(audio) });
    expect(res.body.fields).toEqual({ save: true, language: 'de', response_format: 'srt', title: 'Notiz' });
  });

  const accepted: Array<[string, string]> = [
    ['URL-safe base64 without padding', JSON.stringify({ audio_base64: audio.toString('base64url') })],
    ['raw line breaks inside the base64 (tolerated)', `{"audio_base64":"${b64.replace(/(.{64})/g, '$1\n')}"}`],
    ['spaces and tabs inside the base64', JSON.stringify({ audio_base64: b64.replace(/(.{10})/g, '$1 \t') })],
    ['a charset parameter and unset options after the audio', JSON.stringify({ audio_base64: b64, language: null, title: '' })],
  ];

  it.each(accepted)('accepts %s', async (_name, body) => {
    const res = await send([body], { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sha256: sha256(audio) });
    expect(res.body.fields).toEqual({});
  });

  const refusals: Array<[string, string, number, string, string | null]> = [
    ['an invalid base64 character', `{"audio_base64":"${b64.slice(0, 4000)}*${b64.slice(4000)}"}`, 400, 'invalid_request', 'audio_base64'],
    ['truncated base64', `{"audio_base64":"${b64.slice(0, 4001)}"}`, 400, 'invalid_request', 'audio_base64'],
    ['a raw control character inside the base64', `{"audio_base64":"QUJD\u0001RA=="}`, 400, 'invalid_request', 'audio_base64'],
    ['no audio_base64', '{"language":"en"}', 400, 'missing_audio', 'audio_base64'],
    ['an empty object', '{}', 400, 'missing_audio', 'audio_base64'],
    ['an empty audio_base64', '{"audio_base64":""}', 400, 'missing_audio', 'audio_base64'],
    ['a whitespace-only audio_base64', '{"audio_base64":" \\n "}', 400, 'missing_audio', 'audio_base64'],
    ['a null audio_base64', '{"audio_base64":null,"language":"en"}', 400, 'missing_audio', 'audio_base64'],
    ['a numeric audio_base64', '{"audio_base64":12}', 400, 'invalid_request', 'audio_base64'],
    ['an object as audio_base64', '{"audio_base64":{"data":"QQ=="}}', 400, 'invalid_request', 'audio_base64'],
    ['an array as audio_base64', '{"audio_base64":["QQ=="]}', 400, 'invalid_request', 'audio_base64'],
    ['audio_base64 twice', `{"audio_base64":"${b64}","audio_base64":"QQ=="}`, 400, 'invalid_request', 'audio_base64'],
    ['an unknown key', `{"speed":2,"audio_base64":"${b64}"}`, 400, 'invalid_request', 'speed'],
    ['a multipart field name in JSON', `{"audio":"${b64}"}`, 400, 'invalid_request', 'audio'],
    ['a numeric language', `{"language":5,"audio_base64":"${b64}"}`, 400, 'invalid_request', 'language'],
    ['a string save', `{"save":"true","audio_base64":"${b64}"}`, 400, 'invalid_request', 'save'],
    ['an unknown response_format', `{"response_format":"docx","audio_base64":"${b64}"}`, 400, 'invalid_request', 'response_format'],
    ['a bad option after the audio', `{"audio_base64":"${b64}","save":"yes"}`, 400, 'invalid_request', 'save'],
    ['an unknown key after the audio', `{"audio_base64":"${b64}","speed":2}`, 400, 'invalid_request', 'speed'],
    ['options over 64 KiB', `{"title":"${'t'.repeat(70 * 1024)}","audio_base64":"${b64}"}`, 400, 'invalid_request', 'title'],
    ['a JSON array', `["${b64}"]`, 400, 'invalid_request', null],
    ['broken JSON before the audio', `{"language" "en","audio_base64":"${b64}"}`, 400, 'invalid_request', null],
    ['broken JSON after the audio', `{"audio_base64":"${b64}",}`, 400, 'invalid_request', null],
    ['a body cut short', `{"audio_base64":"${b64}`, 400, 'invalid_request', null],
    ['data after the object', `{"audio_base64":"${b64}"} {}`, 400, 'invalid_request', null],
  ];

  it.each(refusals)('refuses %s', async (_name, body, status, code, param) => {
    const res = await postJson(body, 16 * 1024);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, param });
  });
});
