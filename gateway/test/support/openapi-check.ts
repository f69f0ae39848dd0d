/**
 * Holds real HTTP responses to the OpenAPI document (gateway/src/openapi), so the document
 * cannot drift from the API: every response the integration suite receives from a test gateway
 * under `/api/v1` is checked as it is sent (see recordResponses, hooked in by system.ts), and
 * `sys.stop()` fails the test file listing every response that did not match.
 *
 * A response matches when:
 * - its path matches a path template and its method an operation there, its status is one the
 *   operation documents, every header documented `required` is present, every documented header
 *   present validates against its schema, its Content-Type is one documented for that status,
 *   and its body validates against that media type's schema (ajv, JSON Schema 2020-12, strict,
 *   with formats); an error body's `code` must be one the response gives an example of (the
 *   document lists exactly the codes each operation can answer with);
 * - or, as the document's description says, a path matching no template answers 404
 *   `not_found`, and a documented path called with another method answers 405
 *   `method_not_allowed` with an `Allow` header naming exactly the documented methods (+ HEAD).
 */
import type { RequestListener, ServerResponse } from 'node:http';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { MURMUR_VERSION } from '../../src/app';
import { API_BASE, buildOpenApiDocument, type OpenApiDocument, type OperationObject, type ResponseObject } from '../../src/openapi/document';

type Json = Record<string, unknown>;

/** One HTTP response as the client received it. */
export interface ObservedResponse {
  method: string;
  /** The request target: path and query. */
  url: string;
  status: number;
  /** Response headers (any case). */
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

/** Where component schemas live inside ajv: `#/components/schemas/X` refs are rewritten to it. */
const SCHEMA_BASE = 'https://openapi.murmur.invalid/components/schemas/';
const LOCAL_REF = '#/components/schemas/';

interface PathEntry {
  template: string;
  pattern: RegExp;
  item: Record<string, OperationObject>;
}

/** Checks observed responses against one OpenAPI document. */
export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  private readonly paths: PathEntry[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument = buildOpenApiDocument(MURMUR_VERSION)) {
    // Strict, except strictRequired: ConvertRequest says "exactly one of transcript and
    // recording_id" with the JSON Schema idiom oneOf: [{required: [a]}, {required: [b]}], whose
    // branches name properties defined beside the oneOf rather than inside each branch.
    this.ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
    addFormats(this.ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      this.ajv.addSchema({ ...(rewriteRefs(schema) as Json), $id: SCHEMA_BASE + name });
    }
    this.paths = Object.entries(doc.paths).map(([template, item]) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      item,
    }));
  }

  /** Compiles every schema of the document (component, response body, header); throws on the first invalid one. */
  compileAll(): number {
    let n = 0;
    for (const name of Object.keys(this.doc.components.schemas)) {
      this.ajv.getSchema(SCHEMA_BASE + name);
      n++;
    }
    for (const item of Object.values(this.doc.paths)) {
      for (const op of Object.values(item)) {
        for (const response of Object.values(op.responses)) {
          for (const media of Object.values(response.content ?? {})) {
            this.validator(media.schema);
            n++;
          }
          for (const h of Object.values(response.headers ?? {})) {
            this.validator(this.header(h).schema as Json);
            n++;
          }
        }
      }
    }
    return n;
  }

  /** Validates `value` against a schema of the document (a component name or an inline schema). */
  validate(schema: string | Json, value: unknown): string[] {
    const validate = this.validator(typeof schema === 'string' ? { $ref: LOCAL_REF + schema } : schema);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? 'is invalid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** The problems of one response; empty when it matches the document, null when it is not an API response. */
  check(res: ObservedResponse): string[] | null {
    const pathname = res.url.split('?')[0]!;
    if (pathname !== API_BASE && !pathname.startsWith(`${API_BASE}/`)) return null;
    let path = pathname.slice(API_BASE.length) || '/';
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1); // the routers are not strict
    const headers = lowerCase(res.headers);
    const method = res.method.toLowerCase();
    const entry = this.paths.find((p) => p.pattern.test(path));
    if (!entry) return this.checkFallback(res, headers, 404, 'not_found', `no path template matches ${path}`);
    const operation = entry.item[method === 'head' && !entry.item.head ? 'get' : method];
    if (!operation) {
      const methods = Object.keys(entry.item).map((m) => m.toUpperCase());
      if (methods.includes('GET')) methods.push('HEAD');
      const problems = this.checkFallback(res, headers, 405, 'method_not_allowed', `${res.method} is not documented for ${entry.template}`);
      const allow = String(headers.allow ?? '').split(',').map((m) => m.trim()).filter(Boolean);
      if (allow.sort().join(',') !== methods.sort().join(',')) problems.push(`Allow is "${headers.allow ?? ''}", the document has ${methods.join(', ')}`);
      return problems;
    }
    const response = operation.responses[String(res.status)];
    if (!response) return [`status ${res.status} is not documented for ${res.method.toUpperCase()} ${entry.template} (documented: ${Object.keys(operation.responses).join(', ')})`];
    return this.checkResponse(response, res, headers, method === 'head');
  }

  private checkResponse(response: ResponseObject, res: ObservedResponse, headers: Record<string, string>, head: boolean): string[] {
    const problems: string[] = [];
    for (const [name, raw] of Object.entries(response.headers ?? {})) {
      const h = this.header(raw);
      const value = headers[name.toLowerCase()];
      if (value === undefined) {
        if (h.required === true) problems.push(`header ${name} is missing`);
        continue;
      }
      const schema = h.schema as Json;
      const numeric = (schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(value);
      for (const p of this.validate(schema, numeric ? Number(value) : value)) problems.push(`header ${name}: "${value}" ${p.replace(/^\(body\) /, '')}`);
    }
    if (head) return problems;
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (res.body.length > 0) problems.push(`a body was sent where none is documented`);
      return problems;
    }
    const mediaType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const media = content[mediaType];
    if (!media) return [...problems, `Content-Type "${headers['content-type'] ?? ''}" is not documented (documented: ${Object.keys(content).join(', ')})`];
    let body: unknown = res.body.toString('utf8');
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(body as string);
      } catch {
        return [...problems, `the body is not JSON: ${(body as string).slice(0, 200)}`];
      }
    }
    for (const p of this.validate(media.schema, body)) problems.push(`body ${p}`);
    const code = (body as { error?: { code?: unknown } })?.error?.code;
    if (media.examples && typeof code === 'string' && media.schema.$ref === `${LOCAL_REF}Error` && !(code in media.examples)) {
      problems.push(`error code ${code} is not documented for status ${res.status} (documented: ${Object.keys(media.examples).join(', ')})`);
    }
    return problems;
  }

  /** The responses the document describes in prose: 404 for unknown paths, 405 for other methods. */
  private checkFallback(res: ObservedResponse, headers: Record<string, string>, status: number, code: string, why: string): string[] {
    if (res.status !== status) return [`${why}, so ${status} ${code} was due, not ${res.status}`];
    const problems: string[] = [];
    const requestId = this.header(this.doc.components.headers['X-Request-Id']!);
    if (headers['x-request-id'] === undefined) problems.push('header X-Request-Id is missing');
    else problems.push(...this.validate(requestId.schema as Json, headers['x-request-id']).map((p) => `header X-Request-Id ${p}`));
    if (res.method.toLowerCase() === 'head') return problems;
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      return [...problems, 'the body is not JSON'];
    }
    problems.push(...this.validate('Error', body).map((p) => `body ${p}`));
    if ((body as { error?: { code?: unknown } })?.error?.code !== code) problems.push(`error code is not ${code}`);
    return problems;
  }

  private header(raw: Json): Json {
    const $ref = raw.$ref;
    if (typeof $ref !== 'string') return raw;
    const name = $ref.replace('#/components/headers/', '');
    const found = this.doc.components.headers[name];
    if (!found) throw new Error(`unresolved header ${$ref}`);
    return found;
  }

  private validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(schema) as Json);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith(LOCAL_REF) ? SCHEMA_BASE + v.slice(LOCAL_REF.length) : rewriteRefs(v);
  }
  return out;
}

function lowerCase(headers: ObservedResponse['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

let checker: OpenApiChecker | undefined;
const failures: string[] = [];

/** Checks one response against the served document; returns its problems (null: not an API response). */
export function checkAgainstOpenApi(res: ObservedResponse): string[] | null {
  checker ??= new OpenApiChecker();
  return checker.check(res);
}

/**
 * Wraps a request listener (the gateway app) so every response it sends under `/api/v1` is
 * checked against the document as it ends; mismatches are kept for {@link assertResponsesDocumented}.
 * The app itself is untouched: this only watches `res.write` and `res.end`.
 */
export function recordResponses(app: RequestListener): RequestListener {
  return (req, res) => {
    // Taken now: express rewrites req.url while a mounted router handles the request.
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const chunks: Buffer[] = [];
    const capture = (chunk: unknown, encoding: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, ...args: unknown[]) {
      capture(args[0], args[1]);
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof res.write;
    res.end = function (this: ServerResponse, ...args: unknown[]) {
      capture(args[0], args[1]);
      const result = (end as (...a: unknown[]) => ServerResponse).apply(this, args);
      const observed: ObservedResponse = { method, url, status: res.statusCode, headers: res.getHeaders(), body: Buffer.concat(chunks) };
      try {
        const problems = checkAgainstOpenApi(observed);
        if (problems && problems.length > 0) {
          failures.push(`${observed.method} ${observed.url} → ${observed.status}: ${problems.join('; ')}\n    body: ${observed.body.toString('utf8').slice(0, 300)}`);
        }
      } catch (err) {
        failures.push(`${observed.method} ${observed.url} → ${observed.status}: the check failed: ${(err as Error).message}`);
      }
      return result;
    } as typeof res.end;
    app(req, res);
  };
}

/** Throws listing every response since the last call that did not match the document. */
export function assertResponsesDocumented(): void {
  const found = failures.splice(0);
  if (found.length > 0) {
    throw new Error(`${found.length} response(s) do not match the OpenAPI document (gateway/src/openapi):\n  ${found.join('\n  ')}`);
  }
}
