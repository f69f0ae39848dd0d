/**
 * parseAudioUpload end to end: a real node:http server in this process reads POST bodies with
 * it and answers with the byte count and sha256 of the audio it received plus the options; real
 * clients (node:http with streamed bodies, fetch with FormData) send multipart and JSON bodies.
 * Covers every accepted encoding and every refusal, the size limit firing while the client is
 * still sending, backpressure, aborts, and flat memory for a 200 MB base64 body.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MurmurError } from '@murmur/kit';
import { parseAudioUpload } from '../src/rest/audio-upload';

const MiB = 1024 * 1024;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}
interface Outcome extends Answer {
  /** Bytes the server had read from the connection when the upload settled. */
  bytesRead: number;
}
interface ServerBehaviour {
  maxBytes: number;
  signal?: AbortSignal;
  /** Called when the upload resolves, before any audio is read. */
  onResolved?: (req: IncomingMessage) => void;
  /** The consumer does not read the audio until this settles. */
  hold?: Promise<void>;
  /** The consumer gives up (destroys the audio) after its first chunk. */
  giveUp?: boolean;
}

let behaviour: ServerBehaviour;
let server: http.Server;
let url: string;
const outcomes: Outcome[] = [];
const outcomeWaiters: Array<(o: Outcome) => void> = [];

function record(outcome: Outcome): void {
  const waiter = outcomeWaiters.shift();
  if (waiter) waiter(outcome);
  else outcomes.push(outcome);
}

/** What the server saw for the next request. */
function nextOutcome(): Promise<Outcome> {
  const ready = outcomes.shift();
  return ready ? Promise.resolve(ready) : new Promise((resolve) => outcomeWaiters.push(resolve));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.on('error', () => {}); // the client may be gone
  const b = behaviour;
  let answer: Answer;
  try {
    const upload = await parseAudioUpload(req, { maxBytes: b.maxBytes, signal: b.signal });
    b.onResolved?.(req);
    if (b.hold) await b.hold;
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of upload.audio) {
      if (b.giveUp) upload.audio.destroy();
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    answer = {
      status: 200,
      body: { bytes, sha256: hash.digest('hex'), fields: upload.fields, filename: upload.filename, content_type: upload.contentType },
    };
  } catch (err) {
    answer =
      err instanceof MurmurError
        ? { status: err.httpStatus, body: { code: err.code, param: err.param, message: err.message } }
        : { status: 499, body: { code: (err as Error).name, message: (err as Error).message } };
  }
  record({ ...answer, bytesRead: req.socket.bytesRead });
  if (res.destroyed) return;
  // On failure the body is left unread: close the connection rather than read the rest.
  res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.status === 200 ? {} : { connection: 'close' }) });
  res.end(JSON.stringify(answer.body));
}

beforeAll(async () => {
  server = http.createServer((req, res) => void handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/transcribe`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  behaviour = { maxBytes: 10 * MiB };
  outcomes.length = 0;
});

interface Sent extends Answer {
  /** Body bytes the client managed to hand to its socket. */
  written: number;
  /** Whether the client wrote the whole body before the answer came. */
  finished: boolean;
}

/**
 * POSTs a body written piece by piece (chunked unless a length is given), respecting the
 * socket's backpressure, and stops writing as soon as an answer arrives.
 */
async function send(pieces: Iterable<Buffer | string>, headers: http.OutgoingHttpHeaders): Promise<Sent> {
  const req = http.request(url, { method: 'POST', headers, agent: false });
  let answered = false;
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  let written = 0;
  let finished = true;
  for (const piece of pieces) {
    if (answered || req.destroyed) {
      finished = false;
      break;
    }
    written += Buffer.byteLength(piece);
    if (!req.write(piece)) await Promise.race([once(req, 'drain').catch(() => {}), answer.catch(() => {})]);
  }
  if (finished) req.end();
  const result = await answer;
  req.destroy();
  return { ...result, written, finished };
}

function pieces(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const postJson = (body: string | Buffer, pieceSize?: number) =>
  send(pieceSize ? pieces(Buffer.from(body), pieceSize) : [body], {
    'content-type': 'application/json',
    ...(pieceSize ? {} : { 'content-length': Buffer.byteLength(body) }),
  });

type Part = { name: string; value: string } | { name: string; filename?: string; type?: string; data: Buffer };
const BOUNDARY = 'murmur-test-boundary-7d1f';

function partHead(part: Part): string {
  if ('value' in part) return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n`;
  return (
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename ?? 'clip.wav'}"\r\n` +
    `Content-Type: ${part.type ?? 'audio/wav'}\r\n\r\n`
  );
}

function multipartBody(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(partHead(part)), 'value' in part ? Buffer.from(part.value) : part.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const postMultipart = (parts: Part[], pieceSize = 16 * 1024) => {
  const body = multipartBody(parts);
  return send(pieces(body, pieceSize), { 'content-type': MULTIPART });
};

/** `count` copies of `block`, then `suffix`: a large body made on the fly. */
function* repeated(prefix: string | Buffer, block: Buffer, count: number, suffix: string | Buffer): Generator<Buffer | string> {
  yield prefix;
  for (let i = 0; i < count; i++) yield block;
  yield suffix;
}

/** The sha256 of `count` copies of `block`. */
function repeatedSha(block: Buffer, count: number): string {
  const hash = createHash('sha256');
  for (let i = 0; i < count; i++) hash.update(block);
  return hash.digest('hex');
}

/** Resolves once `read()` has stopped growing for a few polls, i.e. the server stopped reading. */
async function settledCount(read: () => number): Promise<number> {
  let last = -1;
  let stable = 0;
  for (let i = 0; i < 500 && stable < 5; i++) {
    await new Promise((r) => setTimeout(r, 20));
    const now = read();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return last;
}

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
    const res = await fetch(url, { method: 'POST', body: form });
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
    ['save=false', 'save', 'false'],
    ['save=0', 'save', '0'],
    ['response_format=json', 'response_format', 'json'],
    ['an empty title', 'title', ''],
  ])('accepts an option after the file that changes nothing (%s)', async (_name, field, value) => {
    const res = await postMultipart([{ name: 'audio', data: audio }, { name: field, value }]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sha256: sha256(audio) });
    expect(res.body.fields).toEqual({});
  });

  const refusals: Array<[string, Part[], number, string, string | null]> = [
    ['an option after the file that would change the result', [{ name: 'audio', data: audio }, { name: 'language', value: 'de' }], 400, 'invalid_request', 'language'],
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

  const accepted: Array<[string, string]> = [
    ['URL-safe base64 without padding', JSON.stringify({ audio_base64: audio.toString('base64url') })],
    ['raw line breaks inside the base64 (tolerated)', `{"audio_base64":"${b64.replace(/(.{64})/g, '$1\n')}"}`],
    ['spaces and tabs inside the base64', JSON.stringify({ audio_base64: b64.replace(/(.{10})/g, '$1 \t') })],
    ['a charset parameter and options after the audio that restate defaults', JSON.stringify({ audio_base64: b64, save: false, response_format: 'json', language: null, title: '' })],
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
    ['an option after the audio that would change the result', `{"audio_base64":"${b64}","language":"en"}`, 400, 'invalid_request', 'language'],
    ['save: true after the audio', `{"audio_base64":"${b64}","save":true}`, 400, 'invalid_request', 'save'],
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

describe('the size limit', () => {
  it.each([
    ['multipart', (data: Buffer) => postMultipart([{ name: 'audio', data }])],
    ['JSON', (data: Buffer) => postJson(JSON.stringify({ audio_base64: data.toString('base64') }), 7)],
  ])('counts decoded bytes: exactly the limit passes, one more byte fails (%s)', async (_name, post) => {
    behaviour.maxBytes = 1000;
    expect((await post(audio.subarray(0, 1000))).status).toBe(200);
    expect((await post(audio.subarray(0, 1001))).body).toMatchObject({ code: 'audio_too_large' });
  });

  const limit = 1 * MiB;
  const block = randomBytes(48 * 1024); // base64 of it is exactly 64 KiB
  const count = 1024; // 48 MiB of audio, far over the limit

  it('refuses an oversized multipart file with 413 while the client is still sending it', async () => {
    behaviour.maxBytes = limit;
    const head = partHead({ name: 'language', value: '' }) + 'en\r\n' + partHead({ name: 'audio', data: block });
    const res = await send(repeated(head, block, count, `\r\n--${BOUNDARY}--\r\n`), { 'content-type': MULTIPART });
    const seen = await nextOutcome();
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'audio_too_large', param: 'audio', message: expect.stringMatching(/larger than 1 MB/) });
    expect(res.finished).toBe(false);
    expect(res.written).toBeLessThan(block.length * count);
    // It stopped reading within one socket read of the limit.
    expect(seen.bytesRead).toBeLessThanOrEqual(limit + 256 * 1024);
  });

  it('refuses oversized base64 with 413 while the client is still sending it', async () => {
    behaviour.maxBytes = limit;
    const text = Buffer.from(block.toString('base64'));
    const res = await send(repeated('{"language":"en","audio_base64":"', text, count, '"}'), { 'content-type': 'application/json' });
    const seen = await nextOutcome();
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'audio_too_large', param: 'audio_base64' });
    expect(res.finished).toBe(false);
    expect(seen.bytesRead).toBeLessThanOrEqual((limit * 4) / 3 + 256 * 1024);
  });
});

describe('backpressure and aborts', () => {
  const block = randomBytes(48 * 1024);
  const count = 1024; // 48 MiB of audio; 64 MiB as base64

  it.each([
    ['multipart', () => repeated(partHead({ name: 'audio', data: block }), block, count, `\r\n--${BOUNDARY}--\r\n`), MULTIPART],
    ['JSON', () => repeated('{"audio_base64":"', Buffer.from(block.toString('base64')), count, '"}'), 'application/json'],
  ])('stops reading the request while the consumer does not read (%s)', async (_name, body, type) => {
    behaviour.maxBytes = 100 * MiB;
    let release!: () => void;
    behaviour.hold = new Promise<void>((resolve) => (release = resolve));
    const resolved = new Promise<IncomingMessage['socket']>((resolve) => (behaviour.onResolved = (req) => resolve(req.socket)));
    const sending = send(body(), { 'content-type': type });
    const socket = await resolved;
    const stalledAt = await settledCount(() => socket.bytesRead);
    // Kernel socket buffers on loopback hold a few MiB; nothing like the 48+ MiB body.
    expect(stalledAt).toBeLessThan(16 * MiB);
    release();
    const res = await sending;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: block.length * count, sha256: repeatedSha(block, count) });
  });

  it('stops reading the request when the consumer destroys the audio', async () => {
    behaviour.maxBytes = 100 * MiB;
    behaviour.giveUp = true;
    const resolved = new Promise<IncomingMessage['socket']>((resolve) => (behaviour.onResolved = (req) => resolve(req.socket)));
    const sending = send(repeated('{"audio_base64":"', Buffer.from(block.toString('base64')), count, '"}'), { 'content-type': 'application/json' });
    const socket = await resolved;
    const seen = await nextOutcome();
    expect(seen.status).toBe(499);
    expect(await settledCount(() => socket.bytesRead)).toBeLessThan(16 * MiB);
    const res = await sending;
    expect(res.finished).toBe(false);
  });

  it('fails the audio with an AbortError when the client disconnects mid-upload', async () => {
    behaviour.maxBytes = 100 * MiB;
    let resolved!: () => void;
    const started = new Promise<void>((resolve) => (resolved = resolve));
    behaviour.onResolved = () => resolved();
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
    req.on('error', () => {});
    req.write('{"audio_base64":"');
    req.write(block.toString('base64'));
    await started;
    req.destroy();
    const seen = await nextOutcome();
    expect(seen).toMatchObject({ status: 499, body: { code: 'AbortError', message: expect.stringMatching(/disconnected/) } });
  });

  it('fails the audio with an AbortError when the signal aborts', async () => {
    const controller = new AbortController();
    behaviour.signal = controller.signal;
    behaviour.onResolved = () => controller.abort();
    const res = await postMultipart([{ name: 'audio', data: audio }], 1024);
    expect(res).toMatchObject({ status: 499, body: { code: 'AbortError', message: expect.stringMatching(/cancelled/) } });
  });

  it('rejects at once when the signal has already aborted', async () => {
    behaviour.signal = AbortSignal.abort();
    const res = await postMultipart([{ name: 'audio', data: audio }]);
    expect(res).toMatchObject({ status: 499, body: { code: 'AbortError' } });
  });
});

describe('memory', () => {
  const block = randomBytes(48 * 1024);
  const count = 3200; // 150 MiB of audio: 200 MiB of base64

  async function peakGrowth(run: () => Promise<void>): Promise<number> {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    try {
      await run();
    } finally {
      clearInterval(sampler);
    }
    return Math.max(peak, process.memoryUsage().rss) - before;
  }

  it('streams a 200 MB base64 body through with flat memory', async () => {
    behaviour.maxBytes = 500 * MiB;
    const text = Buffer.from(block.toString('base64'));
    let res!: Sent;
    const growth = await peakGrowth(async () => {
      res = await send(repeated('{"language":"en","audio_base64":"', text, count, '"}'), { 'content-type': 'application/json' });
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: block.length * count, sha256: repeatedSha(block, count), fields: { language: 'en' } });
    expect(growth).toBeLessThan(100 * MiB);
  });

  it('streams a 200 MB multipart file through with flat memory', async () => {
    behaviour.maxBytes = 500 * MiB;
    const count200 = Math.ceil((200 * MiB) / block.length);
    let res!: Sent;
    const growth = await peakGrowth(async () => {
      res = await send(repeated(partHead({ name: 'audio', data: block }), block, count200, `\r\n--${BOUNDARY}--\r\n`), { 'content-type': MULTIPART });
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: block.length * count200, sha256: repeatedSha(block, count200) });
    expect(growth).toBeLessThan(100 * MiB);
  });
});
