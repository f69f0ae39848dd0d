/**
 * The openai engine against a local node:http server that speaks POST /v1/audio/transcriptions
 * (multipart in, verbose_json out), including the ways such a server fails.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { EngineError } from '../src/engines/engine';
import { createOpenAiEngine, languageCode, parseVerboseJson, transcriptionsUrl } from '../src/engines/openai';
import { wavHeader } from '../src/pcm';
import { tempDir } from './fixtures';

interface Received {
  path: string;
  authorization: string | undefined;
  fields: Record<string, string>;
  /** Every text field in order (repeated names included). */
  all: Array<[string, string]>;
  file: { name: string; type: string; bytes: Buffer } | undefined;
}

type Handler = (req: Received, res: ServerResponse) => void;

/** A fake OpenAI-compatible endpoint; each test sets `handler`. */
class FakeOpenAi {
  server!: Server;
  baseUrl = '';
  received: Received[] = [];
  handler: Handler = (_req, res) => res.end('{}');
  private readonly open = new Set<ServerResponse>();

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
    const fields: Record<string, string> = {};
    const all: Array<[string, string]> = [];
    let file: Received['file'];
    for (const [key, value] of form.entries()) {
      if (typeof value === 'string') {
        fields[key] = value;
        all.push([key, value]);
      }
      else file = { name: (value as File).name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    const received = { path: req.url ?? '', authorization: req.headers.authorization, fields, all, file };
    this.received.push(received);
    this.handler(received, res);
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

const VERBOSE = {
  task: 'transcribe',
  language: 'english',
  duration: 2.5,
  text: ' Hello there. General Kenobi. ',
  segments: [
    { id: 0, seek: 0, start: 0.0, end: 1.2, text: ' Hello there.', tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
    { id: 1, seek: 0, start: 1.3, end: 2.5, text: ' General Kenobi.', tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 },
  ],
};

const fake = new FakeOpenAi();
let tmp: Awaited<ReturnType<typeof tempDir>>;
let wav: string;
const live = () => new AbortController().signal;

beforeAll(async () => {
  await fake.start();
  tmp = await tempDir('murmur-openai-');
  wav = path.join(tmp.dir, 'chunk.wav');
  await writeFile(wav, Buffer.concat([wavHeader(32_000), Buffer.alloc(32_000)]));
});
afterAll(async () => {
  await fake.stop();
  await tmp.remove();
});
beforeEach(() => {
  fake.received = [];
});

describe('openai engine', () => {
  it('posts the chunk as multipart WAV with model, verbose_json and language, and maps the answer', async () => {
    fake.handler = (_req, res) => json(res, 200, VERBOSE);
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, apiKey: 'sk-test', model: 'whisper-1' });
    const r = await engine.recognize(wav, { language: 'en-US', signal: live() });
    expect(r).toEqual({
      text: 'Hello there. General Kenobi.',
      segments: [
        { start: 0, end: 1.2, text: 'Hello there.' },
        { start: 1.3, end: 2.5, text: 'General Kenobi.' },
      ],
      language: 'en',
    });
    const [req] = fake.received;
    expect(req).toMatchObject({
      path: '/v1/audio/transcriptions',
      authorization: 'Bearer sk-test',
      fields: { model: 'whisper-1', response_format: 'verbose_json', language: 'en' },
    });
    expect(req!.file!.type).toBe('audio/wav');
    expect(req!.file!.name).toBe('audio.wav');
    expect(req!.file!.bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(req!.file!.bytes.length).toBe(44 + 32_000);
  });

  it('sends no language and no authorization when there are none', async () => {
    fake.handler = (_req, res) => json(res, 200, { text: 'hi' });
    const engine = createOpenAiEngine({ baseUrl: `${fake.baseUrl}/v1/`, model: 'm' });
    expect(await engine.recognize(wav, { language: '', signal: live() })).toEqual({ text: 'hi', segments: [] });
    expect(fake.received[0]!.fields.language).toBeUndefined();
    expect(fake.received[0]!.authorization).toBeUndefined();
    expect(fake.received[0]!.path).toBe('/v1/audio/transcriptions');
  });

  it('retries a 500 once and succeeds when the second answer is good', async () => {
    let calls = 0;
    fake.handler = (_req, res) => (++calls === 1 ? json(res, 500, { error: { message: 'overloaded' } }) : json(res, 200, VERBOSE));
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1', retryDelayMs: 1 });
    expect((await engine.recognize(wav, { language: '', signal: live() })).text).toBe('Hello there. General Kenobi.');
    expect(calls).toBe(2);
  });

  it.each<[string, Handler, RegExp, number]>([
    ['a 500 that persists', (_q, res) => json(res, 500, { error: { message: 'boom' } }), /HTTP 500/, 2],
    ['a 429 that persists', (_q, res) => json(res, 429, { error: { message: 'slow down' } }), /HTTP 429/, 2],
    ['a 401 (not retried)', (_q, res) => json(res, 401, { error: { message: 'bad key' } }), /HTTP 401/, 1],
    ['a 400 (not retried)', (_q, res) => json(res, 400, { error: { message: 'bad file' } }), /HTTP 400/, 1],
    ['malformed JSON', (_q, res) => json(res, 200, '{"text": "unterminated'), /not JSON/, 1],
    ['JSON without text', (_q, res) => json(res, 200, { transcript: 'x' }), /"text"/, 1],
    ['segments that are not a list', (_q, res) => json(res, 200, { text: 'x', segments: 'no' }), /not a list/, 1],
    ['a segment without times', (_q, res) => json(res, 200, { text: 'x', segments: [{ text: 'x' }] }), /numeric start/, 1],
    ['a connection dropped mid-answer', (_q, res) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"text":', () => setImmediate(() => res.destroy()));
      }, /broke off/, 2],
  ])('fails with an EngineError on %s', async (_name, handler, message, attempts) => {
    fake.handler = handler;
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1', retryDelayMs: 1 });
    const err = await engine.recognize(wav, { language: '', signal: live() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as Error).message).toMatch(message);
    expect(fake.received).toHaveLength(attempts);
  });

  it('gives up after its timeout when the server never answers', async () => {
    fake.handler = () => undefined; // hold the request open
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1', timeoutMs: 300, retries: 0 });
    await expect(engine.recognize(wav, { language: '', signal: live() })).rejects.toThrow(/did not answer within 300 ms/);
  });

  it('stops at once when the caller aborts, with the caller’s reason', async () => {
    fake.handler = () => undefined;
    const controller = new AbortController();
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1' });
    const run = engine.recognize(wav, { language: '', signal: controller.signal });
    while (fake.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error('client went away'));
    await expect(run).rejects.toThrow('client went away');
  });

  it('fails when nothing listens', async () => {
    const engine = createOpenAiEngine({ baseUrl: 'http://127.0.0.1:9', model: 'whisper-1', retries: 0 });
    await expect(engine.recognize(wav, { language: '', signal: live() })).rejects.toThrow(/could not be reached/);
  });
});

describe('openai engine: words and key terms', () => {
  const WITH_WORDS = {
    ...VERBOSE,
    words: [
      { word: 'Hello', start: 0.0, end: 0.4 },
      { word: ' there.', start: 0.45, end: 1.2 },
      { word: 'General', start: 1.3, end: 1.9 },
      { word: 'Kenobi.', start: 1.9, end: 2.5 },
    ],
  };

  it('asks for word and segment times, passes key terms as the prompt, and maps the words (no confidence)', async () => {
    fake.handler = (_req, res) => json(res, 200, WITH_WORDS);
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1' });
    expect(engine.capabilities).toEqual({ words: true, languageDetection: true, keyterms: 'prompt' });
    const r = await engine.recognize(wav, { language: '', keyterms: ['Kenobi', 'Murmur API'], signal: live() });
    expect(r.words).toEqual([
      { text: 'Hello', start: 0, end: 0.4, confidence: null },
      { text: 'there.', start: 0.45, end: 1.2, confidence: null },
      { text: 'General', start: 1.3, end: 1.9, confidence: null },
      { text: 'Kenobi.', start: 1.9, end: 2.5, confidence: null },
    ]);
    const [req] = fake.received;
    expect(req!.all.filter(([k]) => k === 'timestamp_granularities[]').map(([, v]) => v)).toEqual(['word', 'segment']);
    expect(req!.fields.prompt).toBe('Kenobi, Murmur API');
  });

  it('answers no words from a server that gives none, and asks for none when told the server has none', async () => {
    fake.handler = (_req, res) => json(res, 200, VERBOSE);
    const withWords = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1' });
    expect((await withWords.recognize(wav, { language: '', signal: live() })).words).toBeUndefined();
    const without = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'local', words: false });
    expect(without.capabilities?.words).toBe(false);
    await without.recognize(wav, { language: '', signal: live() });
    expect(fake.received[1]!.all.some(([k]) => k === 'timestamp_granularities[]')).toBe(false);
    expect(fake.received[1]!.fields.prompt).toBeUndefined();
  });

  it('refuses a malformed `words` as an engine failure', async () => {
    fake.handler = (_req, res) => json(res, 200, { ...VERBOSE, words: [{ word: 3, start: 0, end: 1 }] });
    const engine = createOpenAiEngine({ baseUrl: fake.baseUrl, model: 'whisper-1', retries: 0 });
    await expect(engine.recognize(wav, { language: '', signal: live() })).rejects.toThrow(/word without a string/);
  });
});

describe('openai helpers', () => {
  it.each([
    ['https://api.openai.com', 'https://api.openai.com/v1/audio/transcriptions'],
    ['https://api.openai.com/', 'https://api.openai.com/v1/audio/transcriptions'],
    ['http://127.0.0.1:8000/v1', 'http://127.0.0.1:8000/v1/audio/transcriptions'],
    ['http://host/proxy/openai/v1/', 'http://host/proxy/openai/v1/audio/transcriptions'],
  ])('%s → %s', (base, url) => expect(transcriptionsUrl(base)).toBe(url));

  it.each([
    ['english', 'en'],
    ['German', 'de'],
    ['en', 'en'],
    ['klingon', undefined],
    ['', undefined],
  ])('language %j → %j', (reported, code) => expect(languageCode(reported)).toBe(code));

  it('keeps segment text trimmed and drops nothing else', () => {
    expect(parseVerboseJson({ text: ' a ', segments: [{ start: 1, end: 2, text: ' a ' }] })).toEqual({ text: 'a', segments: [{ start: 1, end: 2, text: 'a' }] });
  });
});
