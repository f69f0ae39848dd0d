/**
 * The AsyncAPI 3.0 document of live transcription (`GET /api/v1/asyncapi.json`): the channel
 * `/listen`, its query, the messages each way and the close codes, built from the contract's
 * constants (live-rules.ts) and the gateway's message shapes, as the OpenAPI document is built
 * from the route table — so the published protocol cannot drift from the served one.
 */
import {
  ERROR_CODES,
  LIVE_CLOSE_DRAINING,
  LIVE_CLOSE_NORMAL,
  LIVE_CONTROL_TYPES,
  LIVE_DEFAULT_SAMPLE_RATE,
  LIVE_DRAINING_REASON,
  LIVE_ENCODINGS,
  LIVE_ERROR_CODES,
  LIVE_MAX_FRAME_BYTES,
  LIVE_MAX_SAMPLE_RATE,
  LIVE_MIN_SAMPLE_RATE,
  liveCloseCodeOf,
  LISTEN_TOKEN_TTL_SECONDS,
  MAX_TITLE_CHARS,
} from '@murmur/contract';
import { LIVE_LIMITS } from '../live/listen-messages';

type Schema = Record<string, unknown>;

const num: Schema = { type: 'number', description: 'Seconds from the start of the stream.' };

const WORD: Schema = {
  type: 'object',
  required: ['text', 'start', 'end', 'confidence', 'speaker'],
  properties: { text: { type: 'string' }, start: num, end: num, confidence: { type: ['number', 'null'], minimum: 0, maximum: 1 }, speaker: { type: ['string', 'null'] } },
};

function message(name: string, summary: string, payload: Schema): Schema {
  return { name, title: name, summary, contentType: 'application/json', payload };
}

function typed(type: string, properties: Record<string, Schema> = {}): Schema {
  return { type: 'object', required: ['type', ...Object.keys(properties)], properties: { type: { const: type }, ...properties } };
}

/** The close codes of the channel: normal, draining, and 4000 + the status of each error code. */
export function liveCloseCodes(): Array<{ code: number; reason: string; error_codes: string[] }> {
  const byCode = new Map<number, string[]>();
  for (const code of LIVE_ERROR_CODES) byCode.set(liveCloseCodeOf(code), [...(byCode.get(liveCloseCodeOf(code)) ?? []), code]);
  return [
    { code: LIVE_CLOSE_NORMAL, reason: 'closed', error_codes: [] },
    { code: LIVE_CLOSE_DRAINING, reason: LIVE_DRAINING_REASON, error_codes: [] },
    ...[...byCode].sort(([a], [b]) => a - b).map(([code, codes]) => ({ code, reason: 'the error code', error_codes: codes })),
  ];
}

export function asyncApiDocument(opts: { version: string; host?: string }): Record<string, unknown> {
  const messages: Record<string, Schema> = {
    audio: { name: 'audio', title: 'audio', summary: `A binary frame of audio in the declared encoding, at most ${LIVE_MAX_FRAME_BYTES} bytes.`, contentType: 'application/octet-stream', payload: { type: 'string', format: 'binary', maxLength: LIVE_MAX_FRAME_BYTES } },
    ...Object.fromEntries(LIVE_CONTROL_TYPES.map((t) => [t, message(t, { keepalive: 'Keeps a silent stream open.', finalize: 'Ends the current utterance now.', close: 'Ends the stream: last final, closed, close code 1000.' }[t], typed(t))])),
    open: message('open', 'First: the stream is ready for audio.', typed('open', { id: { type: 'string', pattern: '^trn_' }, model: { type: 'string' }, encoding: { enum: [...LIVE_ENCODINGS] }, sample_rate: { type: ['integer', 'null'] }, limits: { type: 'object', properties: Object.fromEntries(Object.keys(LIVE_LIMITS).map((k) => [k, { type: 'number' }])) } })),
    speech_started: message('speech_started', 'Voice activity began.', typed('speech_started', { at: num })),
    partial: message('partial', 'Unstable text of the utterance being spoken.', typed('partial', { text: { type: 'string' }, start: num, end: num })),
    final: message('final', "One utterance's stable words.", typed('final', { text: { type: 'string' }, start: num, end: num, words: { type: 'array', items: WORD } })),
    utterance_end: message('utterance_end', "The utterance's speech ended.", typed('utterance_end', { at: num })),
    closed: message('closed', 'Last, before close code 1000.', typed('closed', { duration_seconds: { type: 'number' }, credits_charged: { type: 'integer' }, recording_id: { type: ['string', 'null'] } })),
    error: message(
      'error',
      'Sent just before a close code of 4000 + the HTTP status of its code.',
      typed('error', {
        error: {
          type: 'object',
          required: ['type', 'code', 'message', 'param', 'request_id'],
          properties: { type: { type: 'string' }, code: { enum: [...LIVE_ERROR_CODES] }, message: { type: 'string' }, param: { type: ['string', 'null'] }, request_id: { type: 'string' } },
        },
      }),
    ),
  };
  const ref = (name: string) => ({ $ref: `#/channels/listen/messages/${name}` });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Murmur live transcription',
      version: opts.version,
      description: 'Audio in over a WebSocket, words out as they are spoken (docs/live.md). Close codes: x-close-codes.',
    },
    servers: {
      api: { host: opts.host ?? 'localhost:8080', protocol: 'wss', pathname: '/api/v1', security: [{ $ref: '#/components/securitySchemes/apiKey' }, { $ref: '#/components/securitySchemes/listenToken' }] },
    },
    channels: {
      listen: {
        address: '/listen',
        messages,
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                encoding: { enum: [...LIVE_ENCODINGS], default: 'linear16' },
                sample_rate: { type: 'integer', minimum: LIVE_MIN_SAMPLE_RATE, maximum: LIVE_MAX_SAMPLE_RATE, default: LIVE_DEFAULT_SAMPLE_RATE },
                language: { type: 'string', default: 'en' },
                save: { type: 'boolean', default: false },
                title: { type: 'string', maxLength: MAX_TITLE_CHARS },
                folder_id: { type: 'string' },
                token: { type: 'string', pattern: '^lst_', description: `A listen token (POST /api/v1/listen/tokens): one stream, within ${LISTEN_TOKEN_TTL_SECONDS} s.` },
              },
            },
          },
        },
      },
    },
    operations: {
      sendAudio: { action: 'send', channel: { $ref: '#/channels/listen' }, messages: ['audio', ...LIVE_CONTROL_TYPES].map(ref) },
      receiveTranscript: { action: 'receive', channel: { $ref: '#/channels/listen' }, messages: ['open', 'speech_started', 'partial', 'final', 'utterance_end', 'closed', 'error'].map(ref) },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'httpApiKey', name: 'Authorization', in: 'header', description: 'Bearer svc_… (the API key).' },
        listenToken: { type: 'httpApiKey', name: 'token', in: 'query', description: 'A single-use listen token, for browsers.' },
      },
    },
    'x-close-codes': liveCloseCodes().map((c) => ({ ...c, statuses: c.error_codes.map((code) => ERROR_CODES[code as keyof typeof ERROR_CODES].http) })),
  };
}
