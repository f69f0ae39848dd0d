/**
 * The OpenAPI document itself: valid OpenAPI 3.1 (the official schema, through
 * @seriousme/openapi-schema-validator), clean under Redocly's linter (recommended-strict plus the
 * contract's own header rules), every route the gateway serves and no other, every schema
 * compiling under strict ajv 2020-12, every example valid — and the response checker that the
 * integration suite runs (support/openapi-check.ts) refusing what the document does not say.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ERROR_CODES } from '@murmur/contract';
import { KIND_NAMES } from '@murmur/conversion';
import { createApp, MemoryIdempotencyStore, MURMUR_VERSION } from '@murmur/gateway';
import { createLogger, type ServiceClients } from '@murmur/kit';
import * as shapes from '../src/operations/shapes';
import { OPTION_NAMES } from '../src/upload/upload-fields';
import { buildOpenApiDocument, type OpenApiDocument } from '../src/openapi/document';
import { REST_ERROR_CODES } from '../src/openapi/schemas';
import { OpenApiChecker, type ObservedResponse } from './support/openapi-check';

type Json = Record<string, any>;

const ROOT = resolve(__dirname, '../..');

/** Runs an ES module script (the validator and the linter are ESM-only) with the document's path in DOC. */
function runEsm(script: string, doc: unknown): { status: number | null; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'murmur-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, DOC: file },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: res.status, stdout: res.stdout, stderr: res.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const VALIDATE = `
import { Validator } from '@seriousme/openapi-schema-validator';
const validator = new Validator();
const result = await validator.validate(process.env.DOC);
console.log(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null }));
`;

/**
 * Redocly's recommended-strict ruleset (every recommended rule as an error), plus rules that
 * turn the contract's promises into lint errors. Switched off, with the reason:
 * - info-license, info-license-strict: Murmur's API is a proprietary service with terms of use,
 *   not an open-source licence; there is no licence to name.
 */
const LINT = `
import { readFileSync } from 'node:fs';
import { createConfig, lintFromString } from '@redocly/openapi-core';
const config = await createConfig({
  extends: ['recommended-strict'],
  rules: {
    'info-license': 'off',
    'info-license-strict': 'off',
    'operation-description': 'error',
    'parameter-description': 'error',
    'operation-singular-tag': 'error',
    'operation-tag-defined': 'error',
    'request-mime-type': { severity: 'error', allowedValues: ['application/json', 'multipart/form-data'] },
    'response-mime-type': { severity: 'error', allowedValues: ['application/json', 'text/plain', 'application/x-subrip', 'text/vtt', 'text/event-stream'] },
    'response-contains-header': {
      severity: 'error',
      names: {
        '2XX': ['X-Request-Id'],
        '4XX': ['X-Request-Id'],
        '5XX': ['X-Request-Id'],
        '401': ['X-Request-Id', 'WWW-Authenticate'],
        // RateLimit-* describe the AI window: required on the AI routes' 429 (checked below); the
        // per-user caps of event streams and webhook retries answer 429 with Retry-After only.
        '429': ['X-Request-Id', 'Retry-After'],
      },
    },
  },
});
const problems = await lintFromString({ source: readFileSync(process.env.DOC, 'utf8'), absoluteRef: process.env.DOC, config });
console.log(JSON.stringify(problems.map((p) => ({ severity: p.severity, rule: p.ruleId, message: p.message, at: p.location?.[0]?.pointer }))));
`;

describe('the OpenAPI document', () => {
  const doc: OpenApiDocument = buildOpenApiDocument(MURMUR_VERSION);
  const checker = new OpenApiChecker(doc);

  it('is valid OpenAPI 3.1 by the official schema', () => {
    const out = runEsm(VALIDATE, doc);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({ valid: true, version: '3.1', errors: null });
  });

  it('fails the schema validator when broken, so the check above can fail', () => {
    const broken = structuredClone(doc) as Json;
    broken.paths['/me'].get.responses = { '200': { content: {} } }; // a response without its required description
    const out = runEsm(VALIDATE, broken);
    expect(JSON.parse(out.stdout).valid).toBe(false);
  });

  it('passes the Redocly linter (recommended-strict and the contract’s header rules) with no problem at all', () => {
    const out = runEsm(LINT, doc);
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual([]);
  }, 60_000);

  it('gives every AI route’s 429 the RateLimit-* fields of the AI window, and the per-user caps’ 429 Retry-After', () => {
    const ai = ['post /transcribe', 'post /convert', 'post /transcriptions'];
    const caps = ['get /transcriptions/{id}/events', 'post /transcriptions/{id}/webhook/retry'];
    const headersOf = (at: string) => {
      const [method, path] = at.split(' ') as [string, string];
      return Object.keys((doc.paths as Json)[path][method].responses['429'].headers);
    };
    for (const at of ai) expect(headersOf(at)).toEqual(expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']));
    for (const at of caps) expect(headersOf(at)).toEqual(expect.arrayContaining(['Retry-After']));
  });

  it('fails the linter when a response loses X-Request-Id or an example stops matching its schema', () => {
    const broken = structuredClone(doc) as Json;
    delete broken.paths['/folders'].get.responses['200'].headers['X-Request-Id'];
    broken.paths['/me'].get.responses['200'].content['application/json'].example.email = 42;
    const out = runEsm(LINT, broken);
    const rules = (JSON.parse(out.stdout) as Json[]).map((p) => p.rule);
    expect(rules).toEqual(expect.arrayContaining(['response-contains-header', 'no-invalid-media-type-examples']));
  }, 60_000);

  it('documents exactly the routes the gateway serves under /api/v1', () => {
    const app = createApp({ clients: {} as ServiceClients, log: createLogger('test', 'silent'), idempotency: new MemoryIdempotencyStore() });
    const served = new Set<string>();
    interface Layer {
      route?: { path: string; methods: Record<string, boolean> };
      handle: { stack?: Layer[] };
      match(path: string): boolean;
    }
    for (const layer of (app as unknown as { router: { stack: Layer[] } }).router.stack) {
      if (!layer.handle.stack || !layer.match('/api/v1/any')) continue;
      for (const inner of layer.handle.stack) {
        if (!inner.route) continue;
        for (const [method, on] of Object.entries(inner.route.methods)) {
          if (on && method !== '_all') served.add(`${method.toUpperCase()} ${inner.route.path.replace(/:(\w+)/g, '{$1}')}`);
        }
      }
    }
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(served.size).toBeGreaterThanOrEqual(11);
    expect([...served].sort()).toEqual(documented.sort());
  });

  it('has the bearer scheme on every operation but its own', () => {
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const op of Object.values(item)) {
        if (path === '/openapi.json' || path === '/asyncapi.json') expect(op.security).toEqual([]);
        else expect(op.security).toBeUndefined();
      }
    }
  });

  it('takes Idempotency-Key on both AI routes and reports the rate limit on their successes and 429s', () => {
    for (const path of ['/convert', '/transcribe']) {
      const op = doc.paths[path]!.post!;
      expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/Idempotency-Key' });
      for (const status of ['200', '429']) {
        expect(op.responses[status]!.headers).toEqual(
          expect.objectContaining({
            'RateLimit-Limit': expect.objectContaining({ required: true }),
            'RateLimit-Remaining': expect.objectContaining({ required: true }),
            'RateLimit-Reset': expect.objectContaining({ required: true }),
            'RateLimit-Policy': expect.objectContaining({ required: true }),
            RateLimit: expect.objectContaining({ required: true }),
          }),
        );
      }
      expect(op.responses['200']!.headers!['Idempotent-Replayed']).toBeDefined();
      expect(op.responses['429']!.headers!['Retry-After']).toEqual(expect.objectContaining({ required: true }));
    }
  });

  it('serves every transcription format under its own media type', () => {
    const content = doc.paths['/transcribe']!.post!.responses['200']!.content!;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/x-subrip', 'text/plain', 'text/vtt']);
    const body = doc.paths['/transcribe']!.post!.requestBody as Json;
    expect(Object.keys(body.content).sort()).toEqual(['application/json', 'multipart/form-data']);
  });

  it('names every artifact kind the conversion service produces', () => {
    const convert = doc.paths['/convert']!.post!;
    for (const kind of KIND_NAMES) expect(convert.description).toContain(`\`${kind}\``);
  });

  it('documents every option the upload parser accepts, and nothing else', () => {
    const multipart = doc.components.schemas.TranscribeMultipartRequest as Json;
    const json = doc.components.schemas.TranscribeJsonRequest as Json;
    expect(Object.keys(multipart.properties).sort()).toEqual([...OPTION_NAMES, 'audio'].sort());
    expect(Object.keys(json.properties).sort()).toEqual([...OPTION_NAMES, 'audio_base64'].sort());
  });

  it('generates the bodies from the zod shapes', () => {
    const props = (name: string) => Object.keys((doc.components.schemas[name] as Json).properties).sort();
    expect(props('User')).toEqual(Object.keys(shapes.meShape.shape).sort());
    expect(props('Recording')).toEqual(Object.keys(shapes.recordingShape.shape).sort());
    expect(props('ThoughtThread')).toEqual(Object.keys(shapes.threadShape.shape).sort());
    expect(props('Usage')).toEqual(Object.keys(shapes.usageShape.shape).sort());
    expect(props('Transcription')).toEqual(Object.keys(shapes.transcriptionShape.shape).sort());
    expect((doc.components.schemas.Recording as Json).properties.artifacts.items).toEqual({ $ref: '#/components/schemas/Artifact' });
    expect((doc.components.schemas.Artifact as Json).properties.created_at.anyOf[0]).toMatchObject({ type: 'string', format: 'date-time' });
  });

  it('lists every public error code in the error schema, and each at the status of the kit’s table', () => {
    const error = (doc.components.schemas.Error as Json).properties.error.properties;
    expect(error.code.enum).toEqual(REST_ERROR_CODES);
    expect(REST_ERROR_CODES).toContain('method_not_allowed');
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const [status, response] of Object.entries(op.responses).filter(([s]) => Number(s) >= 400)) {
          expect(Object.keys(response.content?.['application/json']?.examples ?? {}).length).toBeGreaterThan(0);
          for (const code of Object.keys(response.content?.['application/json']?.examples ?? {})) {
            expect(`${code} ${ERROR_CODES[code as keyof typeof ERROR_CODES].http}`).toBe(`${code} ${status}`);
          }
        }
      }
    }
  });

  it('compiles every schema under strict ajv (JSON Schema 2020-12 with formats)', () => {
    expect(checker.compileAll()).toBeGreaterThan(100);
  });

  it('has examples that validate against their schemas', () => {
    let n = 0;
    const checkMedia = (where: string, media: Json) => {
      const examples = [...(media.example !== undefined ? [media.example] : []), ...Object.values((media.examples ?? {}) as Json).map((e: Json) => e.value)];
      for (const value of examples) {
        expect([where, checker.validate(media.schema, value)]).toEqual([where, []]);
        n++;
      }
    };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [type, media] of Object.entries(((op.requestBody as Json | undefined)?.content ?? {}) as Json)) checkMedia(`${method} ${path} body ${type}`, media);
        for (const [status, response] of Object.entries(op.responses)) {
          for (const [type, media] of Object.entries(response.content ?? {})) checkMedia(`${method} ${path} ${status} ${type}`, media as Json);
        }
      }
    }
    for (const [name, p] of Object.entries(doc.components.parameters)) {
      expect([name, checker.validate(p.schema as Json, p.example)]).toEqual([name, []]);
    }
    expect(n).toBeGreaterThan(90);
  });
});

describe('the response checker', () => {
  const checker = new OpenApiChecker();
  const requestId = 'req_0123456789abcdef01234567';
  const json = (body: unknown) => Buffer.from(JSON.stringify(body));
  const folders = { object: 'list', data: [], has_more: false, next_cursor: null };
  const ok = (over: Partial<ObservedResponse> = {}): ObservedResponse => ({
    method: 'GET',
    url: '/api/v1/folders?limit=5',
    status: 200,
    headers: { 'x-request-id': requestId, 'content-type': 'application/json; charset=utf-8' },
    body: json(folders),
    ...over,
  });
  const error = (status: number, code: string, headers: Record<string, string> = {}) => ({
    status,
    headers: { 'x-request-id': requestId, 'content-type': 'application/json; charset=utf-8', ...headers },
    body: json({ error: { type: 'invalid_request_error', code, message: 'm', param: null, request_id: requestId } }),
  });

  it('accepts a response the document describes', () => {
    expect(checker.check(ok())).toEqual([]);
    expect(checker.check(ok({ method: 'HEAD', body: Buffer.alloc(0) }))).toEqual([]);
  });

  it('ignores what is not under /api/v1', () => {
    expect(checker.check(ok({ url: '/mcp', status: 406 }))).toBeNull();
  });

  it.each<[string, Partial<ObservedResponse>, RegExp]>([
    ['an undocumented field', { body: json({ ...folders, total: 3 }) }, /must NOT have additional properties/],
    ['a field of the wrong type', { body: json({ ...folders, has_more: 'no' }) }, /has_more must be boolean/],
    ['a missing X-Request-Id', { headers: { 'content-type': 'application/json' } }, /X-Request-Id is missing/],
    ['a malformed X-Request-Id', { headers: { 'x-request-id': 'abc', 'content-type': 'application/json' } }, /X-Request-Id.*pattern/],
    ['an undocumented status', { status: 402 }, /status 402 is not documented/],
    ['an undocumented media type', { headers: { 'x-request-id': requestId, 'content-type': 'text/html' } }, /Content-Type "text\/html" is not documented/],
    ['a body that is not JSON', { body: Buffer.from('<html>') }, /not JSON/],
    ['an unknown path answered 200', { url: '/api/v1/nope' }, /404 not_found was due/],
    ['another method answered 200', { method: 'DELETE' }, /405 method_not_allowed was due/],
    ['a 405 with a wrong Allow', { method: 'DELETE', ...error(405, 'method_not_allowed', { allow: 'GET' }) }, /Allow is "GET"/],
    ['a 401 without WWW-Authenticate', error(401, 'missing_api_key'), /WWW-Authenticate is missing/],
    ['an error code the operation does not answer with', error(400, 'missing_audio'), /error code missing_audio is not documented/],
    ['a body missing required fields', { url: '/api/v1/recordings/rec_x', body: json({ id: 'rec_x' }) }, /must have required property/],
    [
      'a time that is not ISO-8601',
      { body: json({ ...folders, data: [{ id: 'fld_1', object: 'folder', name: 'n', recording_count: 0, created_at: 'yesterday', updated_at: null }] }) },
      /created_at must match format "date-time"/,
    ],
    [
      'an id without its type prefix',
      { body: json({ ...folders, data: [{ id: 'rec_1', object: 'folder', name: 'n', recording_count: 0, created_at: null, updated_at: null }] }) },
      /\/data\/0\/id must match pattern/,
    ],
  ])('refuses %s', (_name, over, problem) => {
    const problems = checker.check(ok(over));
    expect(problems?.join('\n')).toMatch(problem);
  });

  it('accepts the documented fallbacks: 404 for unknown paths, 405 with Allow for other methods', () => {
    expect(checker.check(ok({ url: '/api/v1/nope', ...error(404, 'not_found') }))).toEqual([]);
    expect(checker.check(ok({ method: 'DELETE', ...error(405, 'method_not_allowed', { allow: 'GET, HEAD' }) }))).toEqual([]);
    expect(checker.check(ok({ method: 'GET', url: '/api/v1/convert', ...error(405, 'method_not_allowed', { allow: 'POST' }) }))).toEqual([]);
  });

  it('checks text formats and their headers', () => {
    const rateLimit = { 'ratelimit-limit': '10', 'ratelimit-remaining': '9', 'ratelimit-reset': '60', 'ratelimit-policy': '"ai";q=10;w=60', ratelimit: '"ai";r=9;t=60' };
    const srt = {
      method: 'POST',
      url: '/api/v1/transcribe',
      status: 200,
      headers: { 'x-request-id': requestId, 'content-type': 'application/x-subrip; charset=utf-8', 'x-credits-charged': '1', ...rateLimit },
      body: Buffer.from('1\n00:00:00,000 --> 00:00:01,000\nhello\n'),
    };
    expect(checker.check(srt)).toEqual([]);
    expect(checker.check({ ...srt, headers: { ...srt.headers, 'x-credits-charged': 'one' } })?.join()).toMatch(/X-Credits-Charged.*integer/);
    expect(checker.check({ ...srt, headers: { ...srt.headers, ratelimit: 'r=9, t=60' } })?.join()).toMatch(/RateLimit/);
    expect(checker.check({ ...srt, headers: { 'x-request-id': requestId, 'content-type': 'text/vtt' } })?.join()).toMatch(/RateLimit-Limit is missing/);
  });
});
