/**
 * The rules of live transcription (GET /api/v1/listen, docs/live.md): its query options, its
 * limits and its close codes, defined once for the gateway that enforces them at the socket, the
 * transcription service that enforces them on the audio, and the AsyncAPI document that
 * publishes them.
 */
import { ERROR_CODES, invalidParam, type ErrorCode } from './errors';
import { MAX_TITLE_CHARS } from './text-rules';

/** The endpoint's path on the public API (the gateway serves it; the app's Record page connects to it). */
export const LISTEN_PATH = '/api/v1/listen';

/**
 * The endpoint's WebSocket URL on the public API at `publicApiUrl` (PUBLIC_API_URL): `wss:` for
 * an https API, `ws:` for http, on the API's host, whatever path the address carries.
 */
export function listenUrlOf(publicApiUrl: string): string {
  const url = new URL(publicApiUrl);
  return `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}${LISTEN_PATH}`;
}

/** How a stream's audio is encoded (the `encoding` query parameter). */
export const LIVE_ENCODINGS = ['linear16', 'webm', 'ogg'] as const;
export type LiveEncoding = (typeof LIVE_ENCODINGS)[number];

/** `sample_rate` of linear16 audio: its range and default. */
export const LIVE_MIN_SAMPLE_RATE = 8_000;
export const LIVE_MAX_SAMPLE_RATE = 48_000;
export const LIVE_DEFAULT_SAMPLE_RATE = 16_000;

/** Largest binary frame: 128 KiB (4 s of 16 kHz PCM; a MediaRecorder's 250 ms slice is ~4 KB). */
export const LIVE_MAX_FRAME_BYTES = 128 * 1024;
/** A stream with no message (audio or keepalive) for this long is closed (4408). */
export const LIVE_IDLE_SECONDS = 15;
/** Streams one user may have open at once. */
export const MAX_LIVE_STREAMS_PER_USER = 2;
/**
 * Audio may arrive at most this many times faster than real time, after the first
 * {@link LIVE_SPEED_ALLOWANCE_SECONDS} (a client sending what it buffered while reconnecting).
 */
export const LIVE_MAX_SPEED = 2;
export const LIVE_SPEED_ALLOWANCE_SECONDS = 10;
/** Continuous speech gets a final at least this often (the utterance is cut there), so words never wait long for theirs. */
export const LIVE_MAX_UTTERANCE_SECONDS = 20;
/** Longest stream: 4 hours of audio. */
export const LIVE_MAX_SECONDS = 4 * 60 * 60;

/** The close code of a normal end (after the client's `close`). */
export const LIVE_CLOSE_NORMAL = 1000;
/** The close code of a draining gateway (RFC 6455's "service restart"): every final was sent; reconnect. */
export const LIVE_CLOSE_DRAINING = 1012;
/** Its reason. */
export const LIVE_DRAINING_REASON = 'server_draining';

/** The close code of an error: 4000 + the HTTP status of its code, so one table serves both. */
export function liveCloseCodeOf(code: ErrorCode): number {
  return 4000 + ERROR_CODES[code].http;
}

/** The client's control messages (text frames of JSON). */
export const LIVE_CONTROL_TYPES = ['keepalive', 'finalize', 'close'] as const;
export type LiveControlType = (typeof LIVE_CONTROL_TYPES)[number];

/** The options of a stream, from its query string. */
export interface LiveOptions {
  encoding: LiveEncoding;
  sampleRate: number;
  language: string;
  save: boolean;
  title: string;
  folderId: string;
}

const QUERY_KEYS = new Set(['encoding', 'sample_rate', 'language', 'save', 'title', 'folder_id', 'token']);

/** The stream's options from its query parameters; a bad one is invalid_request naming it. */
export function liveOptionsOf(query: URLSearchParams): LiveOptions {
  for (const key of query.keys()) {
    if (!QUERY_KEYS.has(key)) throw invalidParam(key, `Unknown query parameter \`${key}\`. Streams take ${[...QUERY_KEYS].map((k) => `\`${k}\``).join(', ')}.`);
  }
  const encoding = query.get('encoding') ?? 'linear16';
  if (!(LIVE_ENCODINGS as readonly string[]).includes(encoding)) {
    throw invalidParam('encoding', `\`encoding\` must be one of ${LIVE_ENCODINGS.join(', ')}.`);
  }
  const rateText = query.get('sample_rate');
  const sampleRate = rateText === null ? LIVE_DEFAULT_SAMPLE_RATE : Number(rateText);
  if (!/^\d+$/.test(rateText ?? '0') || !Number.isInteger(sampleRate) || sampleRate < LIVE_MIN_SAMPLE_RATE || sampleRate > LIVE_MAX_SAMPLE_RATE) {
    throw invalidParam('sample_rate', `\`sample_rate\` must be an integer from ${LIVE_MIN_SAMPLE_RATE} to ${LIVE_MAX_SAMPLE_RATE} (default ${LIVE_DEFAULT_SAMPLE_RATE}).`);
  }
  if (rateText !== null && encoding !== 'linear16') {
    throw invalidParam('sample_rate', '`sample_rate` applies to `encoding=linear16` only: WebM and Ogg carry their own.');
  }
  const saveText = query.get('save') ?? 'false';
  if (saveText !== 'true' && saveText !== 'false') throw invalidParam('save', '`save` must be `true` or `false`.');
  const title = query.get('title') ?? '';
  if (title.length > MAX_TITLE_CHARS) throw invalidParam('title', `\`title\` must be at most ${MAX_TITLE_CHARS} characters.`);
  return { encoding: encoding as LiveEncoding, sampleRate, language: query.get('language') ?? '', save: saveText === 'true', title, folderId: query.get('folder_id') ?? '' };
}

/**
 * Every error a live stream can end with (docs/live.md's close-code table lists each, with
 * {@link liveCloseCodeOf}; the AsyncAPI document too).
 */
export const LIVE_ERROR_CODES = [
  'invalid_request',
  'missing_api_key',
  'invalid_api_key',
  'expired_api_key',
  'insufficient_tokens',
  'spending_cap_reached',
  'insufficient_scope',
  'request_timeout',
  'audio_too_large',
  'unsupported_audio',
  'rate_limit_exceeded',
  'too_many_invalid_keys',
  'audio_too_fast',
  'transcription_failed',
  'service_unavailable',
  'internal_error',
] as const satisfies readonly ErrorCode[];
