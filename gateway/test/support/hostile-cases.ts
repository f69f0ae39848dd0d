/**
 * The hostile requests of gateway/test/hostile-input.test.ts, as tables: every route and `/mcp`
 * with malformed JSON, truncated bodies, wrong content types, huge headers, invalid UTF-8,
 * forged and foreign cursors, ids of other types and other users, JSON-RPC garbage, and what
 * Node's HTTP parser refuses. Generated variations come from kit's seededRandom, so a failing
 * case replays from its name.
 */
import { seededRandom } from '@murmur/kit';
import { buildRequest, type RawRequestSpec } from './raw-http';

/** What a case may rely on: keys, and ids of the caller's and of another user's rows. */
export interface HostileContext {
  /** The key of the user whose data the cases read (alice). */
  key: string;
  /** A key for one AI call: AI routes take a rate-limit slot before reading the body, so cases rotate users. */
  aiKey(): Promise<string>;
  own: { recording: string; thread: string; folder: string; cursor: Record<ListPath, string> };
  /** Another user's ids and cursors (bob). */
  foreign: { recording: string; thread: string; folder: string; cursor: Record<ListPath, string> };
  /** A few KB of valid audio (WAV). */
  wav: Buffer;
}

export type ListPath = '/recordings' | '/thought-threads' | '/folders' | '/knowledge-bases';
export const LIST_PATHS: ListPath[] = ['/recordings', '/thought-threads', '/folders', '/knowledge-bases'];

export interface Expectation {
  status?: number;
  code?: string;
  param?: string | null;
}

export interface HostileCase {
  name: string;
  /** The bytes to send. */
  request(ctx: HostileContext): Promise<Buffer> | Buffer;
  /** The answer may be JSON-RPC (an error, or a tool result with isError) rather than the REST body. */
  mcp?: boolean;
  expect?: Expectation;
}

const API = '/api/v1';
const bearer = (key: string): [string, string] => ['Authorization', `Bearer ${key}`];
const json: Array<[string, string]> = [['Content-Type', 'application/json']];
const mcpHeaders = (key: string): Array<[string, string]> => [bearer(key), ['Content-Type', 'application/json'], ['Accept', 'application/json, text/event-stream']];
const req = (spec: RawRequestSpec) => buildRequest(spec);
const get = (target: string, key?: string, headers: Array<[string, string | Buffer]> = []) =>
  req({ method: 'GET', target, headers: [...(key ? [bearer(key)] : []), ...headers] });

/** Every route with a method it serves, and a call that is valid apart from what a case breaks. */
const ROUTES: Array<{ name: string; method: string; target: (c: HostileContext) => string; body?: string; ai?: boolean; mcp?: boolean }> = [
  { name: 'GET /me', method: 'GET', target: () => `${API}/me` },
  { name: 'GET /usage', method: 'GET', target: () => `${API}/usage` },
  { name: 'GET /recordings', method: 'GET', target: () => `${API}/recordings` },
  { name: 'GET /recordings/{id}', method: 'GET', target: (c) => `${API}/recordings/${c.own.recording}` },
  { name: 'GET /thought-threads', method: 'GET', target: () => `${API}/thought-threads` },
  { name: 'GET /thought-threads/{id}', method: 'GET', target: (c) => `${API}/thought-threads/${c.own.thread}` },
  { name: 'GET /folders', method: 'GET', target: () => `${API}/folders` },
  { name: 'GET /knowledge-bases', method: 'GET', target: () => `${API}/knowledge-bases` },
  { name: 'POST /convert', method: 'POST', target: () => `${API}/convert`, body: '{"transcript":"We agreed to ship on Friday.","kind":"summary"}', ai: true },
  { name: 'POST /transcribe', method: 'POST', target: () => `${API}/transcribe`, body: '{"audio_base64":"UklGRg=="}', ai: true },
  { name: 'POST /transcriptions', method: 'POST', target: () => `${API}/transcriptions`, body: '{"audio_base64":"UklGRg=="}', ai: true },
  { name: 'GET /transcriptions', method: 'GET', target: () => `${API}/transcriptions` },
  { name: 'GET /transcriptions/{id}', method: 'GET', target: () => `${API}/transcriptions/trn_0000000000000000` },
  { name: 'GET /transcriptions/{id}/events', method: 'GET', target: () => `${API}/transcriptions/trn_0000000000000000/events` },
  { name: 'POST /transcriptions/{id}/cancel', method: 'POST', target: () => `${API}/transcriptions/trn_0000000000000000/cancel` },
  { name: 'POST /mcp', method: 'POST', target: () => '/mcp', body: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}', mcp: true },
];

/** Authorization headers that must never reach a handler: each route answers 401 or 400. */
function authCases(): HostileCase[] {
  const variants: Array<[string, (c: HostileContext) => Array<[string, string | Buffer]>, Expectation]> = [
    ['no Authorization', () => [], { status: 401, code: 'missing_api_key' }],
    ['a forged key', () => [['Authorization', `Bearer svc_${'f'.repeat(64)}`]], { status: 401, code: 'invalid_api_key' }],
    ['a key with invalid UTF-8 bytes', () => [['Authorization', Buffer.concat([Buffer.from('Bearer svc_'), Buffer.from([0xff, 0xfe, 0xc3, 0x28])])]], { status: 401 }],
    ['two Authorization headers (a valid one first)', (c) => [bearer(c.key), ['Authorization', `Bearer svc_${'0'.repeat(64)}`]], { status: 400, code: 'invalid_request', param: 'Authorization' }],
    ['two Authorization headers (a valid one second)', (c) => [['Authorization', 'Bearer nope'], bearer(c.key)], { status: 400, code: 'invalid_request', param: 'Authorization' }],
  ];
  return ROUTES.flatMap((route) =>
    variants.map(([what, headers, expect]) => ({
      name: `${route.name} with ${what}`,
      expect,
      request: (c: HostileContext) =>
        req({
          method: route.method,
          target: route.target(c),
          headers: [...headers(c), ...(route.body ? [['Content-Type', 'application/json'] as [string, string]] : []), ...(route.mcp ? [['Accept', 'application/json, text/event-stream'] as [string, string]] : [])],
          body: route.body,
        }),
    })),
  );
}

/** Bytes that are never UTF-8, percent-encoded. */
const BAD_UTF8 = ['%C3%28', '%FF%FE', '%ED%A0%80', '%ZZ', '%C0%AF', '%E2%82', '%F8%88%80%80%80', '%80', '%'];

function queryCases(): HostileCase[] {
  const cases: HostileCase[] = [];
  for (const list of LIST_PATHS) {
    const textParam = list === '/recordings' ? 'q' : 'cursor';
    for (const bad of BAD_UTF8) {
      cases.push({ name: `GET ${list}?${textParam}=${bad} (invalid UTF-8)`, expect: { status: 400, code: 'invalid_request', param: textParam }, request: (c) => get(`${API}${list}?${textParam}=${bad}`, c.key) });
    }
    const more: Array<[string, (c: HostileContext) => string, Expectation]> = [
      ['a NUL in a value', () => `${textParam}=a%00b`, { status: 400, param: textParam }],
      ['a repeated parameter', () => 'limit=1&limit=2', { status: 400, param: 'limit' }],
      ['an array parameter', () => 'limit[]=1', { status: 400, param: 'limit[]' }],
      ['an unknown parameter', () => 'sort=desc', { status: 400, param: 'sort' }],
      ['limit 0', () => 'limit=0', { status: 400, param: 'limit' }],
      ['limit 10^12', () => 'limit=1000000000000', { status: 400, param: 'limit' }],
      ['a forged cursor', () => 'cursor=eyJ2IjoxfQ.AAAAAAAAAAAAAAAAAAAAAA', { status: 400, param: 'cursor' }],
      ['another user’s cursor', (c) => `cursor=${encodeURIComponent(c.foreign.cursor[list])}`, { status: 400, code: 'invalid_request', param: 'cursor' }],
      ['a cursor of another list', (c) => `cursor=${encodeURIComponent(c.own.cursor[list === '/folders' ? '/recordings' : '/folders'])}`, { status: 400, param: 'cursor' }],
      ['a cursor with a flipped signature', (c) => `cursor=${encodeURIComponent(c.own.cursor[list].slice(0, -1) + (c.own.cursor[list].endsWith('A') ? 'B' : 'A'))}`, { status: 400, param: 'cursor' }],
    ];
    for (const [what, query, expect] of more) {
      cases.push({ name: `GET ${list} with ${what}`, expect: { code: 'invalid_request', ...expect }, request: (c) => get(`${API}${list}?${query(c)}`, c.key) });
    }
  }
  const recordings: Array<[string, (c: HostileContext) => string, Expectation]> = [
    ['created_after=2026-02-30', () => 'created_after=2026-02-30', { status: 400, param: 'created_after' }],
    ['created_after=2025-02-29T00:00:00Z', () => 'created_after=2025-02-29T00:00:00Z', { status: 400, param: 'created_after' }],
    ['created_before=2026-01-01T24:00:00Z', () => 'created_before=2026-01-01T24:00:00Z', { status: 400, param: 'created_before' }],
    ['created_before=2026-01-01T12:00:00+25:00', () => 'created_before=2026-01-01T12:00:00%2B25:00', { status: 400, param: 'created_before' }],
    ['created_after=yesterday', () => 'created_after=yesterday', { status: 400, param: 'created_after' }],
    ['dates in the wrong order', () => 'created_after=2026-02-01&created_before=2026-01-01', { status: 400, param: 'created_after' }],
    ['q of 1001 characters', () => `q=${'a'.repeat(1001)}`, { status: 400, param: 'q' }],
    ['another user’s folder_id', (c) => `folder_id=${c.foreign.folder}`, { status: 404, code: 'not_found', param: 'folder_id' }],
    ['a folder_id that is a recording id', (c) => `folder_id=${c.own.recording}`, { status: 404, code: 'not_found', param: 'folder_id' }],
    ['a folder_id with SQL', () => `folder_id=${encodeURIComponent("fld_' OR 1=1 --")}`, { status: 404, code: 'not_found', param: 'folder_id' }],
  ];
  for (const [what, query, expect] of recordings) {
    cases.push({ name: `GET /recordings with ${what}`, expect: { code: 'invalid_request', ...expect }, request: (c) => get(`${API}/recordings?${query(c)}`, c.key) });
  }
  return cases;
}

function idCases(): HostileCase[] {
  const one: Array<[string, (c: HostileContext) => string]> = [
    ['another user’s recording', (c) => `/recordings/${c.foreign.recording}`],
    ['a thread id as a recording', (c) => `/recordings/${c.own.thread}`],
    ['a folder id as a recording', (c) => `/recordings/${c.own.folder}`],
    ['another user’s thread', (c) => `/thought-threads/${c.foreign.thread}`],
    ['a recording id as a thread', (c) => `/thought-threads/${c.own.recording}`],
    ['a NUL in the id', () => '/recordings/rec_%00'],
    ['an id of 5,000 characters', () => `/recordings/rec_${'a'.repeat(5000)}`],
    ['an id with a path traversal', () => '/recordings/..%2F..%2Fme'],
    ['an id that is invalid UTF-8', () => '/recordings/%FF%FE'],
    ['an id that is a half escape', () => '/thought-threads/%E2%82'],
  ];
  return one.map(([what, path]) => ({
    name: `GET ${what}`,
    request: (c: HostileContext) => get(`${API}${path(c)}`, c.key),
  }));
}

/** POST bodies: each route's JSON broken in every way a client breaks it. */
function bodyCases(): HostileCase[] {
  const convert: Array<[string, Array<[string, string]>, string | Buffer, Expectation?]> = [
    ['malformed JSON', [['Content-Type', 'application/json']], '{"transcript": "x", "kind": summary}', { status: 400, code: 'invalid_request' }],
    ['a truncated body', [['Content-Type', 'application/json']], '{"transcript": "We agreed', { status: 400 }],
    ['an empty body', [['Content-Type', 'application/json']], '', { status: 400 }],
    ['a JSON array', [['Content-Type', 'application/json']], '[{"transcript":"x","kind":"summary"}]', { status: 400 }],
    ['JSON null', [['Content-Type', 'application/json']], 'null', { status: 400 }],
    ['a JSON number', [['Content-Type', 'application/json']], '42', { status: 400 }],
    ['text/plain', [['Content-Type', 'text/plain']], 'summarise this please', { status: 400 }],
    ['no Content-Type', [], '{"transcript":"x","kind":"summary"}', { status: 400 }],
    ['form encoding', [['Content-Type', 'application/x-www-form-urlencoded']], 'transcript=x&kind=summary', { status: 400 }],
    ['a Latin-1 charset', [['Content-Type', 'application/json; charset=latin1']], '{"transcript":"caf\u00e9","kind":"summary"}', { status: 400 }],
    ['invalid UTF-8 in a string', [['Content-Type', 'application/json']], Buffer.concat([Buffer.from('{"transcript":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('","kind":"summary"}')]), { status: 400, param: 'transcript' }],
    ['a lone surrogate escape', [['Content-Type', 'application/json']], '{"transcript":"half \\ud800 pair","kind":"summary"}', { status: 400, param: 'transcript' }],
    ['a NUL escape', [['Content-Type', 'application/json']], '{"transcript":"a\\u0000b","kind":"summary"}', { status: 400, param: 'transcript' }],
    ['an unknown field', [['Content-Type', 'application/json']], '{"transcript":"x","kind":"summary","model":"gpt"}', { status: 400, param: 'model' }],
    ['a kind that is a number', [['Content-Type', 'application/json']], '{"transcript":"x","kind":7}', { status: 400, param: 'kind' }],
    ['both transcript and recording_id', [['Content-Type', 'application/json']], '{"transcript":"x","recording_id":"rec_x","kind":"summary"}', { status: 400 }],
    ['nesting 10,000 deep', [['Content-Type', 'application/json']], `${'['.repeat(10_000)}${']'.repeat(10_000)}`, { status: 400 }],
    ['a Content-Length larger than the body', [['Content-Type', 'application/json'], ['Content-Length', '5']], '{"transcript"', { status: 400 }],
  ];
  const cases: HostileCase[] = convert.map(([what, headers, body, expect]) => ({
    name: `POST /convert with ${what}`,
    expect: { code: 'invalid_request', ...expect },
    request: async (c: HostileContext) => req({ method: 'POST', target: `${API}/convert`, headers: [bearer(await c.aiKey()), ...headers], body }),
  }));
  const foreignRecording: HostileCase[] = [
    ['another user’s recording_id', (c: HostileContext) => c.foreign.recording],
    ['a thread id as recording_id', (c: HostileContext) => c.own.thread],
  ].map(([what, id]) => ({
    name: `POST /convert with ${what as string}`,
    expect: { status: 404, code: 'not_found' },
    request: async (c: HostileContext) =>
      req({ method: 'POST', target: `${API}/convert`, headers: [bearer(await c.aiKey()), ...json], body: JSON.stringify({ recording_id: (id as (c: HostileContext) => string)(c), kind: 'summary' }) }),
  }));
  cases.push(...foreignRecording);

  const boundary = 'hostileBoundary42';
  const multipart: Array<[string, string]> = [['Content-Type', `multipart/form-data; boundary=${boundary}`]];
  const transcribe: Array<[string, (c: HostileContext) => { headers: Array<[string, string]>; body: string | Buffer }, Expectation]> = [
    ['no body', () => ({ headers: [['Content-Type', 'application/json']], body: '' }), { status: 400 }],
    ['text/plain', () => ({ headers: [['Content-Type', 'text/plain']], body: 'hello' }), { status: 400 }],
    ['JSON without audio', () => ({ headers: [['Content-Type', 'application/json']], body: '{"language":"en"}' }), { status: 400, code: 'missing_audio' }],
    ['base64 that is not base64', () => ({ headers: [['Content-Type', 'application/json']], body: '{"audio_base64":"!!!not base64!!!"}' }), { status: 400, param: 'audio_base64' }],
    ['an unknown response_format', (c) => ({ headers: [['Content-Type', 'application/json']], body: `{"response_format":"docx","audio_base64":"${c.wav.toString('base64')}"}` }), { status: 400, param: 'response_format' }],
    ['a title with NUL (save)', (c) => ({ headers: [['Content-Type', 'application/json']], body: `{"save":true,"title":"a\\u0000b","audio_base64":"${c.wav.toString('base64')}"}` }), { status: 400, param: 'title' }],
    ['another user’s folder_id (save)', (c) => ({ headers: [['Content-Type', 'application/json']], body: `{"save":true,"folder_id":"${c.foreign.folder}","audio_base64":"${c.wav.toString('base64')}"}` }), { status: 404, code: 'not_found' }],
    ['multipart without a boundary parameter', () => ({ headers: [['Content-Type', 'multipart/form-data']], body: 'x' }), { status: 400 }],
    ['multipart without an audio part', () => ({ headers: multipart, body: `--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n--${boundary}--\r\n` }), { status: 400, code: 'missing_audio' }],
    ['a truncated JSON body', () => ({ headers: [['Content-Type', 'application/json']], body: '{"audio_base64": "AAAA' }), { status: 400 }],
    [
      'invalid UTF-8 in a JSON title',
      (c) => ({ headers: [['Content-Type', 'application/json']], body: Buffer.concat([Buffer.from(`{"audio_base64":"${c.wav.toString('base64')}","save":true,"title":"a`), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]) }),
      { status: 400, code: 'invalid_request', param: 'title' },
    ],
    [
      'invalid UTF-8 in a multipart title',
      (c) => ({
        headers: multipart,
        body: Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="save"\r\n\r\ntrue\r\n`),
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\na`),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
          c.wav,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]),
      }),
      { status: 400, code: 'invalid_request', param: 'title' },
    ],
    ['four bytes of base64 audio', () => ({ headers: [['Content-Type', 'application/json']], body: '{"audio_base64":"AAAA"}' }), {}],
    ['valid audio then an unknown field', (c) => ({ headers: [['Content-Type', 'application/json']], body: `{"audio_base64":"${c.wav.toString('base64')}","colour":"blue"}` }), { status: 400, param: 'colour' }],
    ['a multipart audio part without its closing boundary', (c) => ({
      headers: multipart,
      body: Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`), c.wav]),
    }), {}],
  ];
  // A job takes the same upload, so the same refusals (its own for response_format).
  for (const route of ['/transcribe', '/transcriptions']) {
    for (const [what, make, expect] of transcribe) {
      cases.push({
        name: `POST ${route} with ${what}`,
        expect,
        request: async (c) => {
          const { headers, body } = make(c);
          return req({ method: 'POST', target: `${API}${route}`, headers: [bearer(await c.aiKey()), ...headers], body });
        },
      });
    }
  }
  const jobs: Array<[string, string, Expectation]> = [
    ['GET /transcriptions with an unknown status', '/transcriptions?status=done', { status: 400, code: 'invalid_request', param: 'status' }],
    ['GET /transcriptions with limit 0', '/transcriptions?limit=0', { status: 400, code: 'invalid_request', param: 'limit' }],
    ['GET /transcriptions with a forged cursor', '/transcriptions?cursor=eyJ2IjoxfQ.AAAAAAAAAAAAAAAAAAAAAA', { status: 400, code: 'invalid_request', param: 'cursor' }],
    ['GET /transcriptions with an unknown parameter', '/transcriptions?sort=desc', { status: 400, code: 'invalid_request', param: 'sort' }],
    ['GET /transcriptions/{id} with an unknown response_format', '/transcriptions/trn_0000000000000000?response_format=docx', { status: 400, code: 'invalid_request', param: 'response_format' }],
    ['GET /transcriptions/{id} of a job that does not exist', '/transcriptions/trn_0000000000000000', { status: 404, code: 'not_found' }],
    ['GET /transcriptions/{id} with a recording id', '/transcriptions/rec_0000000000000000', { status: 404, code: 'not_found' }],
    ['GET /transcriptions/{id} with a NUL in the id', '/transcriptions/trn_%00', { status: 404, code: 'not_found' }],
    ['GET /transcriptions/{id}/events of a job that does not exist', '/transcriptions/trn_0000000000000000/events', { status: 404, code: 'not_found' }],
  ];
  for (const [name, target, expect] of jobs) cases.push({ name, expect, request: (c) => get(`${API}${target}`, c.key) });
  cases.push({
    name: 'POST /transcriptions/{id}/cancel of a job that does not exist',
    expect: { status: 404, code: 'not_found' },
    request: (c) => req({ method: 'POST', target: `${API}/transcriptions/trn_0000000000000000/cancel`, headers: [bearer(c.key)], body: '' }),
  });
  return cases;
}

const rpc = (method: unknown, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const call = (name: string, args: unknown) => rpc('tools/call', { name, arguments: args });

function mcpCases(): HostileCase[] {
  const bodies: Array<[string, (c: HostileContext) => string | Buffer, Expectation?]> = [
    ['malformed JSON', () => '{"jsonrpc":"2.0","id":1,"method":'],
    ['an empty body', () => ''],
    ['a batch', () => `[${rpc('tools/list', {})}]`],
    ['an empty object', () => '{}'],
    ['jsonrpc 1.0', () => JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' })],
    ['a method that is a number', () => rpc(42, {})],
    ['an unknown method', () => rpc('tools/explode', {})],
    ['params that are a string', () => rpc('tools/call', 'list_recordings')],
    ['an unknown tool', () => call('create_api_key', {})],
    ['invalid UTF-8 bytes', () => Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/'), Buffer.from([0xff, 0xfe]), Buffer.from('list"}')]), { code: 'invalid_request', param: 'method' }],
    [
      'convert with invalid UTF-8 in the transcript',
      () => Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"convert","arguments":{"kind":"summary","transcript":"x'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}}}')]),
      { code: 'invalid_request', param: 'params.arguments.transcript' },
    ],
    ['list_recordings with a lone surrogate in q', () => call('list_recordings', { q: 'plan \ud800' }).replace('\ud800', '\\ud800'), { param: 'q' }],
    ['list_recordings with a NUL in q', () => call('list_recordings', { q: 'a\u0000b' }), { param: 'q' }],
    ['list_recordings with created_after 2026-02-30', () => call('list_recordings', { created_after: '2026-02-30T00:00:00Z' })],
    ['list_recordings with limit "abc"', () => call('list_recordings', { limit: 'abc' })],
    ['list_recordings with limit 0', () => call('list_recordings', { limit: 0 })],
    ['list_recordings with a forged cursor', () => call('list_recordings', { cursor: 'eyJ2IjoxfQ.AAAAAAAAAAAAAAAAAAAAAA' }), { param: 'cursor' }],
    ['list_recordings with another user’s cursor', (c) => call('list_recordings', { cursor: c.foreign.cursor['/recordings'] }), { param: 'cursor' }],
    ['list_recordings with another user’s folder', (c) => call('list_recordings', { folder_id: c.foreign.folder }), { code: 'not_found', param: 'folder_id' }],
    ['list_folders with a cursor of recordings', (c) => call('list_folders', { cursor: c.own.cursor['/recordings'] }), { param: 'cursor' }],
    ['list_thought_threads with limit as a string', () => call('list_thought_threads', { limit: '5' })],
    ['list_folders with a cursor that is an object', () => call('list_folders', { cursor: { after: 'fld_x' } })],
    ['get_recording of another user', (c) => call('get_recording', { recording_id: c.foreign.recording }), { code: 'not_found' }],
    ['get_recording with a thread id', (c) => call('get_recording', { recording_id: c.own.thread }), { code: 'not_found' }],
    ['get_thought_thread with a lone surrogate', () => call('get_thought_thread', { thread_id: 'thr_\ud800' }).replace('\ud800', '\\ud800'), { param: 'thread_id' }],
    ['get_thought_thread of another user', (c) => call('get_thought_thread', { thread_id: c.foreign.thread }), { code: 'not_found' }],
    ['get_usage with arguments that are an array', () => call('get_usage', [1, 2])],
    ['transcribe with base64 that is not base64', () => call('transcribe', { audio_base64: '!!!' })],
    ['transcribe with a title holding NUL', (c) => call('transcribe', { audio_base64: c.wav.toString('base64'), save: true, title: 'a\u0000b' }), { param: 'title' }],
    ['convert with another user’s recording', (c) => call('convert', { recording_id: c.foreign.recording, kind: 'summary' }), { code: 'not_found' }],
    ['convert with a lone surrogate in the transcript', () => call('convert', { transcript: 'x \udc00', kind: 'summary' }).replace('\udc00', '\\udc00'), { param: 'transcript' }],
  ];
  const cases: HostileCase[] = bodies.map(([what, body, expect]) => ({
    name: `POST /mcp with ${what}`,
    mcp: true,
    expect,
    request: async (c: HostileContext) => req({ method: 'POST', target: '/mcp', headers: mcpHeaders(/transcribe|convert/.test(what) ? await c.aiKey() : c.key), body: body(c) }),
  }));
  const transport: Array<[string, (c: HostileContext) => Buffer]> = [
    ['POST /mcp as text/plain', (c) => req({ method: 'POST', target: '/mcp', headers: [bearer(c.key), ['Content-Type', 'text/plain'], ['Accept', 'application/json, text/event-stream']], body: rpc('tools/list', {}) })],
    ['POST /mcp accepting only text/html', (c) => req({ method: 'POST', target: '/mcp', headers: [bearer(c.key), ['Content-Type', 'application/json'], ['Accept', 'text/html']], body: rpc('tools/list', {}) })],
    ['POST /mcp from a foreign Origin', (c) => req({ method: 'POST', target: '/mcp', headers: [...mcpHeaders(c.key), ['Origin', 'https://evil.example']], body: rpc('tools/list', {}) })],
    ['GET /mcp', (c) => get('/mcp', c.key, [['Accept', 'text/event-stream']])],
    ['DELETE /mcp', (c) => req({ method: 'DELETE', target: '/mcp', headers: [bearer(c.key), ['Mcp-Session-Id', 'x']] })],
  ];
  cases.push(...transport.map(([name, request]) => ({ name, mcp: true, request })));
  return cases;
}

/** What Node's parser refuses before any handler: raw bytes, since HTTP clients will not send them. */
function parserCases(): HostileCase[] {
  const raw = (s: string) => Buffer.from(s, 'latin1');
  const bad = (status: number): Expectation => ({ status, code: 'invalid_request' });
  return [
    { name: 'a 40 KB header', expect: bad(431), request: (c) => get(`${API}/me`, c.key, [['X-Padding', 'a'.repeat(40_000)]]) },
    { name: 'a 100 KB query', expect: bad(431), request: (c) => get(`${API}/recordings?q=${'a'.repeat(100_000)}`, c.key) },
    { name: '200 headers of 100 bytes', expect: bad(431), request: (c) => get(`${API}/me`, c.key, Array.from({ length: 200 }, (_, i) => [`X-H${i}`, 'b'.repeat(100)] as [string, string])) },
    { name: 'a NUL in a header', expect: bad(400), request: (c) => get(`${API}/me`, c.key, [['X-Bad', Buffer.from('a\0b', 'latin1')]]) },
    { name: 'a control character in a header', expect: bad(400), request: (c) => get(`${API}/me`, c.key, [['X-Bad', Buffer.from('a\x07b', 'latin1')]]) },
    { name: 'a header without a colon', expect: bad(400), request: () => raw(`GET ${API}/me HTTP/1.1\r\nHost: x\r\nNoColonHere\r\nConnection: close\r\n\r\n`) },
    { name: 'a missing Host', expect: { status: 400, code: 'invalid_request', param: 'Host' }, request: (c) => raw(`GET ${API}/me HTTP/1.1\r\nAuthorization: Bearer ${c.key}\r\nConnection: close\r\n\r\n`) },
    { name: 'Content-Length with Transfer-Encoding', expect: bad(400), request: (c) => raw(`POST ${API}/convert HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`) },
    { name: 'two Content-Lengths that disagree', expect: bad(400), request: () => raw(`POST ${API}/convert HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello!`) },
    { name: 'a negative Content-Length', expect: bad(400), request: () => raw(`POST ${API}/convert HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\nConnection: close\r\n\r\n`) },
    { name: 'a bad chunk size on /convert', expect: bad(400), request: async (c) => raw(`POST ${API}/convert HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${await c.aiKey()}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`) },
    { name: 'a bad chunk size on /mcp', expect: bad(400), request: (c) => raw(`POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${c.key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n-5\r\n{}\r\n0\r\n\r\n`) },
    { name: 'an unknown method', expect: bad(400), request: () => raw(`FROB ${API}/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`) },
    { name: 'a TLS hello on the plain port', expect: bad(400), request: () => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01]), Buffer.from('\r\n\r\n')]) },
    { name: 'an HTTP version 9.9', expect: bad(400), request: () => raw(`GET ${API}/me HTTP/9.9\r\nHost: x\r\n\r\n`) },
    { name: 'a space in the request target', expect: bad(400), request: () => raw(`GET ${API}/me please HTTP/1.1\r\nHost: x\r\n\r\n`) },
    { name: 'CONNECT (a proxy tunnel)', expect: { status: 405, code: 'method_not_allowed' }, request: () => raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n') },
  ];
}

/** Generated variations (seeded): invalid UTF-8 in every text parameter, cut bodies, mangled JSON-RPC. */
function generatedCases(seed: number): HostileCase[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const hex = (n: number) => `%${n.toString(16).toUpperCase().padStart(2, '0')}`;
  const word = () => Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join('');
  // Never UTF-8: a lone continuation byte, an overlong lead, a byte above F4, or a truncated sequence.
  const invalid = () => pick([() => hex(0x80 + Math.floor(rnd() * 64)), () => hex(pick([0xc0, 0xc1])) + hex(0x80), () => hex(0xf5 + Math.floor(rnd() * 11)), () => hex(0xe0 + Math.floor(rnd() * 16)) + hex(0x80 + Math.floor(rnd() * 32))])();
  const cases: HostileCase[] = [];
  for (let i = 0; i < 12; i++) {
    const list = pick(LIST_PATHS);
    const param = list === '/recordings' ? pick(['q', 'folder_id', 'cursor']) : 'cursor';
    const value = `${word()}${invalid()}${word()}`;
    cases.push({ name: `seed ${seed} #${i}: GET ${list}?${param}=${value}`, expect: { status: 400, code: 'invalid_request', param }, request: (c) => get(`${API}${list}?${param}=${value}`, c.key) });
  }
  const convertBody = JSON.stringify({ transcript: 'Ship on Friday; Dana writes the notes.', kind: 'summary', instructions: 'short' });
  for (let i = 0; i < 12; i++) {
    const cut = 1 + Math.floor(rnd() * (convertBody.length - 2));
    cases.push({
      name: `seed ${seed} #${i}: POST /convert cut at byte ${cut}`,
      expect: { status: 400, code: 'invalid_request' },
      request: async (c) => req({ method: 'POST', target: `${API}/convert`, headers: [bearer(await c.aiKey()), ['Content-Type', 'application/json']], body: convertBody.slice(0, cut) }),
    });
  }
  const rpcBody = call('list_recordings', { limit: 5, q: 'plan' });
  for (let i = 0; i < 12; i++) {
    const at = Math.floor(rnd() * rpcBody.length);
    const notJson = (text: string) => {
      try {
        JSON.parse(text);
        return false;
      } catch {
        return true;
      }
    };
    const mangled = pick([
      () => rpcBody.slice(0, at),
      // A swapped byte can leave valid JSON (a renamed key): then the body is cut there instead.
      () => [rpcBody.slice(0, at) + pick(['{', '}', '"', ',', ':', '\\', ']']) + rpcBody.slice(at + 1)].map((t) => (notJson(t) ? t : rpcBody.slice(0, at)))[0]!,
      () => rpcBody.replace('"tools/call"', JSON.stringify(word())),
      () => rpcBody.replace('"limit":5', `"limit":${pick(['-1', '101', '1.5', '"5"', 'null', '[]'])}`),
    ])();
    cases.push({ name: `seed ${seed} #${i}: POST /mcp ${JSON.stringify(mangled.slice(0, 60))}`, mcp: true, request: (c) => req({ method: 'POST', target: '/mcp', headers: mcpHeaders(c.key), body: mangled }) });
  }
  for (let i = 0; i < 6; i++) {
    const size = 17_000 + Math.floor(rnd() * 60_000);
    cases.push({ name: `seed ${seed} #${i}: a ${size}-byte header`, expect: { status: 431, code: 'invalid_request' }, request: (c) => get(`${API}/${pick(['me', 'usage', 'folders'])}`, c.key, [['X-Big', 'x'.repeat(size)]]) });
  }
  return cases;
}

/** Every hostile case; `seed` drives the generated part. */
export function hostileCases(seed: number): HostileCase[] {
  return [...authCases(), ...queryCases(), ...idCases(), ...bodyCases(), ...mcpCases(), ...parserCases(), ...generatedCases(seed)];
}
