/**
 * The read-path baseline: `GET /api/v1/recordings` served by ONE process (express + one `pg`
 * pool) over the same database the real services use, doing the same work per request as
 * gateway → auth → library, minus the process hops:
 *
 * - the bearer key is parsed (scheme case-insensitive, `svc_` + 64 hex), hashed with SHA-256,
 *   and looked up in `auth.api_keys` (unknown / revoked / expired refused), with verified keys
 *   kept in an in-process cache for 60 s and expiry re-checked on every hit — as the auth
 *   service's VerificationCache does with its in-process store;
 * - the first page (or the page after a cursor) is read from `library.recordings` with the
 *   library's keyset query, the same columns and the same 1,000-character preview source, and
 *   fetched with `limit + 1` rows to learn `has_more`;
 * - the body is the public list envelope `{object, data, has_more, next_cursor}` with the
 *   gateway's recording summary fields in the gateway's order, and the cursor is signed the
 *   way the library signs it, so for the same data both servers answer byte-identical JSON.
 *
 * It deliberately imports nothing from the services: it is what a one-process implementation
 * of this route would be. Started by the read-path benchmark as
 * `node bench/dist/baseline-server.js` with DATABASE_URL, PORT, HOST, MURMUR_CURSOR_SECRET and
 * BASELINE_POOL_SIZE; answers `GET /healthz` once the database answers.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Pool } from 'pg';

const DATABASE_URL = process.env.DATABASE_URL;
const PORT = Number(process.env.PORT ?? 0);
const HOST = process.env.HOST ?? '127.0.0.1';
const CURSOR_SECRET = process.env.MURMUR_CURSOR_SECRET ?? 'murmur-dev-cursor-secret-change-me';
const POOL_SIZE = Number(process.env.BASELINE_POOL_SIZE ?? 10);

/** How long a verified key is answered without the database (the auth service's TTL). */
const KEY_CACHE_TTL_MS = 60_000;
const API_KEY_PATTERN = /^svc_[0-9a-f]{64}$/;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const PREVIEW_MAX_CHARS = 200;
const PREVIEW_SOURCE_CHARS = 1000;

const KEY_SQL = `SELECT id, user_id, key_hash, expires_at, revoked_at FROM auth.api_keys WHERE key_hash = $1`;
const LIST_COLUMNS = `r.id, r.owner_id, r.title, r.folder_id, r.duration_seconds, r.created_at, r.updated_at,
  r.transcript IS NOT NULL AS has_transcript, left(r.transcript, ${PREVIEW_SOURCE_CHARS}) AS preview_source`;
const FIRST_PAGE_SQL = `SELECT ${LIST_COLUMNS} FROM library.recordings r WHERE r.owner_id = $1
  ORDER BY r.created_at DESC, r.id DESC LIMIT $2`;
const NEXT_PAGE_SQL = `SELECT ${LIST_COLUMNS} FROM library.recordings r WHERE r.owner_id = $1
  AND (r.created_at, r.id) < ($3::timestamptz, $4::text)
  ORDER BY r.created_at DESC, r.id DESC LIMIT $2`;

interface KeyRow {
  id: string;
  user_id: string;
  key_hash: string;
  expires_at: Date | null;
  revoked_at: Date | null;
}

interface RecordingRow {
  id: string;
  owner_id: string;
  title: string;
  folder_id: string | null;
  duration_seconds: number;
  created_at: Date;
  updated_at: Date;
  has_transcript: boolean;
  preview_source: string | null;
}

interface CachedKey {
  userId: string;
  expiresAt: number | null;
  cachedUntil: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

const unauthorized = (code: string, message: string) => new HttpError(401, 'authentication_error', code, message);
const badParam = (param: string, message: string) => new HttpError(400, 'invalid_request_error', 'invalid_request', message, param);

const pool = new Pool({ connectionString: DATABASE_URL, max: POOL_SIZE, idleTimeoutMillis: 30_000, application_name: 'bench-baseline' });
pool.on('error', (err) => process.stderr.write(`idle Postgres connection failed: ${err.message}\n`));

const verifiedKeys = new Map<string, CachedKey>();

/** The owner of a valid bearer key, in the order of DESIGN.md §2. */
async function verifyKey(header: string | undefined): Promise<string> {
  const parts = (header ?? '').trim().split(/\s+/);
  if (parts[0] === '') throw unauthorized('missing_api_key', 'Send your API key as `Authorization: Bearer <key>`.');
  if (parts[0]!.toLowerCase() !== 'bearer') throw unauthorized('invalid_api_key', 'The API key is not valid.');
  const key = parts[1];
  if (key === undefined) throw unauthorized('missing_api_key', 'Send your API key as `Authorization: Bearer <key>`.');
  if (parts.length > 2 || !API_KEY_PATTERN.test(key)) throw unauthorized('invalid_api_key', 'The API key is not valid.');

  const hash = createHash('sha256').update(key, 'utf8').digest('hex');
  const now = Date.now();
  const cached = verifiedKeys.get(hash);
  if (cached && cached.cachedUntil > now) {
    if (cached.expiresAt !== null && now >= cached.expiresAt) throw unauthorized('expired_api_key', 'The API key has expired.');
    return cached.userId;
  }
  verifiedKeys.delete(hash);

  const { rows } = await pool.query<KeyRow>(KEY_SQL, [hash]);
  const row = rows[0];
  const same = row !== undefined && row.key_hash.length === hash.length && timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash));
  if (!row || !same || row.revoked_at !== null) throw unauthorized('invalid_api_key', 'The API key is not valid.');
  const expiresAt = row.expires_at === null ? null : row.expires_at.getTime();
  if (expiresAt !== null && now >= expiresAt) throw unauthorized('expired_api_key', 'The API key has expired.');
  verifiedKeys.set(hash, { userId: row.user_id, expiresAt, cachedUntil: now + KEY_CACHE_TTL_MS });
  return row.user_id;
}

/** The first ~200 characters of a transcript, whitespace collapsed, cut on a word boundary (the library's algorithm). */
function preview(text: string): string {
  const window = 2 * PREVIEW_MAX_CHARS + 2;
  let flat = flatten(text.length > window ? text.slice(0, window) : text);
  if (text.length > window && flat.length <= PREVIEW_MAX_CHARS + 1) flat = flatten(text);
  if (flat.length <= PREVIEW_MAX_CHARS) return flat;
  const lastSpace = flat.lastIndexOf(' ', PREVIEW_MAX_CHARS);
  let cut = lastSpace >= PREVIEW_MAX_CHARS / 2 ? lastSpace : PREVIEW_MAX_CHARS;
  const code = flat.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  while (cut > 0 && TRAILING.has(flat[cut - 1]!)) cut -= 1;
  return `${flat.slice(0, cut)}…`;
}
const TRAILING = new Set([' ', ',', ';', ':', '.', '–', '—', '-']);
const flatten = (s: string) => s.replace(/\s+/g, ' ').trim();

// Cursors: base64url(JSON {v, l, t, i, f}) + "." + 22 characters of HMAC-SHA256, bound to the
// list and to its (here: empty) filter set, as the library issues them.
const NO_FILTERS = createHash('sha256').update(JSON.stringify([null, null, null, null])).digest('base64url').slice(0, 12);
const sign = (body: string) => createHmac('sha256', CURSOR_SECRET).update(body).digest('base64url').slice(0, 22);

function encodeCursor(last: RecordingRow): string {
  const body = Buffer.from(JSON.stringify({ v: 1, l: 'recordings', t: last.created_at.getTime(), i: last.id, f: NO_FILTERS })).toString('base64url');
  return `${body}.${sign(body)}`;
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const bad = badParam('cursor', 'The cursor is not valid. Pass `next_cursor` from a previous page unchanged.');
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined || cursor.length > 512) throw bad;
  const expected = Buffer.from(sign(body));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw bad;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw bad;
  }
  if (p.v !== 1 || p.l !== 'recordings' || p.f !== NO_FILTERS || !Number.isSafeInteger(p.t) || typeof p.i !== 'string') throw bad;
  return { createdAt: new Date(p.t as number), id: p.i };
}

function pageParams(query: Request['query']): { limit: number; cursor?: string } {
  let limit = DEFAULT_LIMIT;
  let cursor: string | undefined;
  for (const [name, raw] of Object.entries(query)) {
    if (typeof raw !== 'string') throw badParam(name, `\`${name}\` must be given once, as a plain value.`);
    if (name === 'limit') {
      limit = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
      if (!(limit >= 1 && limit <= MAX_LIMIT)) throw badParam('limit', `\`limit\` must be an integer from 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`);
    } else if (name === 'cursor') {
      cursor = raw;
    } else {
      throw badParam(name, `Unknown query parameter \`${name}\`. Allowed: limit, cursor.`);
    }
  }
  return cursor === undefined ? { limit } : { limit, cursor };
}

async function listRecordings(req: Request, res: Response): Promise<void> {
  const ownerId = await verifyKey(req.get('authorization'));
  const { limit, cursor } = pageParams(req.query);
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const { rows } = after
    ? await pool.query<RecordingRow>(NEXT_PAGE_SQL, [ownerId, limit + 1, after.createdAt, after.id])
    : await pool.query<RecordingRow>(FIRST_PAGE_SQL, [ownerId, limit + 1]);
  const hasMore = rows.length > limit;
  const served = hasMore ? rows.slice(0, limit) : rows;
  const last = served[served.length - 1];
  res.json({
    object: 'list',
    data: served.map((r) => ({
      id: r.id,
      object: 'recording',
      title: r.title,
      folder_id: r.folder_id,
      duration_seconds: r.duration_seconds,
      preview: preview(r.preview_source ?? ''),
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
    })),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(last) : null,
  });
}

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.set('query parser', 'simple');
app.use((_req, res, next) => {
  res.setHeader('X-Request-Id', `req_${randomBytes(15).toString('base64url')}`);
  next();
});
app.get('/healthz', async (_req, res) => {
  await pool.query('SELECT 1');
  res.json({ status: 'ok' });
});
app.get('/api/v1/recordings', listRecordings);
app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
  const e = err instanceof HttpError ? err : new HttpError(500, 'api_error', 'internal_error', 'Internal error.');
  if (!(err instanceof HttpError)) process.stderr.write(`baseline: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  if (e.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="murmur"');
  res.status(e.status).json({ error: { type: e.type, code: e.code, message: e.message, param: e.param, request_id: res.getHeader('X-Request-Id') } });
});

const server: Server = app.listen(PORT, HOST);
server.keepAliveTimeout = 65_000;
server.on('error', (err) => {
  process.stderr.write(`baseline could not listen on ${HOST}:${PORT}: ${err.message}\n`);
  process.exit(1);
});

function stop(): void {
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeAllConnections();
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
