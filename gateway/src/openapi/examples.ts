/**
 * Example values of the OpenAPI document: one realistic user's data, ids in the shape the
 * services mint (`rec_` + 24 base32 characters). The linter checks every example against its
 * schema, and the unit test does again with ajv, so an example cannot drift from its shape.
 */
import { ERROR_CODES, MAX_PAGE_LIMIT, MurmurError, pageSizeOf, type ErrorCode } from '@murmur/contract';
import { timelineFromSegments, toSrtFromTimeline, toVttFromTimeline } from '../captions/captions';
import { transcriptText } from '../captions/transcript-text';

const REC_ID = 'rec_61mb5jml9kgtidvfgnuapl09';
const REC_ID_2 = 'rec_gbaeaeoncfardmed562e4ulj';
const FOLDER_ID = 'fld_9r1pvcfbqvdpbe5akpg3took';
const THREAD_ID = 'thr_uvgss5i0gfbbumpe3kd1ikev';
const ARTIFACT_ID = 'art_2186b695h6am90u52b66qd1l';
/** A fresh request id as the gateway mints it (`req_` + 24 hex). */
export const REQUEST_ID = 'req_5f0c2a9d8e7b6a5c4d3e2f10';

const rateLimit = { limit: 10, remaining: 9, window_seconds: 60, reset_seconds: 42 };

export const usageExample = {
  object: 'usage',
  plan: {
    id: 'pro',
    name: 'Pro',
    monthly_credits: 2000,
    rate_limit_per_minute: 10,
    max_audio_bytes: 500_000_000,
    max_transcript_chars: 1_000_000,
    prepaid_credit_price_cents: 1,
    transcription_credits_per_minute: 1,
    conversion_credits_per_1k_chars: 1,
  },
  credits: { monthly_allowance: 2000, monthly_remaining: 1874, prepaid_remaining: 500, reserved: 0, resets_at: '2026-04-01T00:00:00.000Z' },
  period: { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
  spending: { cap_cents: 5000, spent_cents: 0 },
  rate_limit: rateLimit,
  counters: { credits_used: 126, transcriptions: 41, transcription_seconds: 6120, conversions: 23 },
};

export const userExample = {
  id: 'usr_c8e07fk4gqrle084rovcvf7c',
  object: 'user',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  created_at: '2025-11-03T09:12:44.120Z',
  plan: { id: 'pro', name: 'Pro' },
  usage: usageExample,
  library: { recordings: 128, thought_threads: 9, folders: 6, knowledge_bases: 2, recorded_seconds: 48211.5 },
  api_key: { id: 'key_dhkkdm0vk036gfhi71bjhk7v', expires_at: '2026-06-01T09:12:44.120Z' },
};

const recordingSummary = {
  id: REC_ID,
  object: 'recording',
  title: 'Checkout redesign planning',
  folder_id: FOLDER_ID,
  duration_seconds: 1843.2,
  preview: 'Priya opened the planning meeting for the checkout redesign. We agreed to ship the new payment page in March…',
  created_at: '2026-03-12T14:03:10.000Z',
  updated_at: '2026-03-12T14:35:51.482Z',
};

const artifactExample = {
  id: ARTIFACT_ID,
  object: 'artifact',
  kind: 'action_items',
  format: 'markdown',
  content: '## Action items\n\n- [ ] **Marcus**: Send the revised deck to the design team (due Fri 2026-03-13)\n- [ ] **Elena**: Review the analytics dashboard (due Tue 2026-03-17)\n',
  data: {
    items: [
      { task: 'Send the revised deck to the design team', owner: 'Marcus', due: '2026-03-13' },
      { task: 'Review the analytics dashboard', owner: 'Elena', due: '2026-03-17' },
    ],
  },
  credits_charged: 1,
  recording_id: REC_ID,
  created_at: '2026-03-12T14:36:02.317Z',
};

export const recordingListExample = {
  object: 'list',
  data: [
    recordingSummary,
    {
      id: REC_ID_2,
      object: 'recording',
      title: 'Voice memo: gift ideas',
      folder_id: null,
      duration_seconds: 48,
      preview: 'Ideas for Sam’s birthday: the pottery class, or the cookbook from the market…',
      created_at: '2026-03-11T19:40:02.000Z',
      updated_at: '2026-03-11T19:40:02.000Z',
    },
  ],
  has_more: true,
  next_cursor: 'eyJjIjoiMjAyNi0wMy0xMVQxOTo0MDowMi4wMDBaIiwiaSI6InJlY19nYmFlIn0.q1Xv0a8sRk2Lw7Tz',
};

export const recordingExample = {
  ...recordingSummary,
  transcript: {
    text: 'Priya opened the planning meeting for the checkout redesign. We agreed to ship the new payment page in March.',
    language: 'en',
    segments: [
      { start: 0, end: 4.2, text: 'Priya opened the planning meeting for the checkout redesign.', speaker: 'S1' },
      { start: 4.2, end: 7.9, text: 'We agreed to ship the new payment page in March.', speaker: 'S2' },
    ],
    word_count: 19,
    speakers: [
      { id: 'S1', name: 'Priya' },
      { id: 'S2', name: null },
    ],
  },
  artifacts: [artifactExample],
};

const threadSummary = {
  id: THREAD_ID,
  object: 'thought_thread',
  title: 'Checkout launch',
  item_count: 3,
  created_at: '2026-03-10T08:00:00.000Z',
  updated_at: '2026-03-12T15:02:11.904Z',
};

export const threadListExample = { object: 'list', data: [threadSummary], has_more: false, next_cursor: null };

export const threadExample = {
  ...threadSummary,
  items: [
    { id: 'thi_og3q4lhcdmmjchv00g5tcaqm', kind: 'recording', text: 'Checkout redesign planning', recording_id: REC_ID, created_at: '2026-03-12T14:40:00.000Z' },
    { id: 'thi_3v0o1m8d5kq2ha7s6u4p9n0c', kind: 'question', text: 'Who owns the analytics review?', recording_id: null, created_at: '2026-03-12T15:01:40.000Z' },
    { id: 'thi_7b2n4q6s8u0m1k3i5g7e9c1a', kind: 'answer', text: 'Elena reviews the analytics dashboard before Tuesday.', recording_id: null, created_at: '2026-03-12T15:02:11.904Z' },
  ],
  context_sources: [
    { id: 'ctx_7c3acvf69e7ddfd2vasnvad6', kind: 'folder', ref_id: FOLDER_ID, title: 'Work meetings', added_at: '2026-03-10T08:00:05.000Z' },
  ],
};

export const folderListExample = {
  object: 'list',
  data: [
    { id: FOLDER_ID, object: 'folder', name: 'Work meetings', recording_count: 42, created_at: '2025-11-03T09:20:00.000Z', updated_at: '2026-03-12T14:03:10.000Z' },
    { id: 'fld_5v208s0m4vc6a51alif3n4ha', object: 'folder', name: 'Journal', recording_count: 17, created_at: '2025-11-05T21:02:00.000Z', updated_at: '2026-03-09T22:14:31.000Z' },
  ],
  has_more: false,
  next_cursor: null,
};

export const knowledgeBaseListExample = {
  object: 'list',
  data: [
    {
      id: 'kb_pnn2ircn04a75qcqpgbt3dfu',
      object: 'knowledge_base',
      name: 'Product research',
      description: 'Customer interviews and usability sessions for the checkout redesign.',
      recording_count: 12,
      created_at: '2026-01-15T10:00:00.000Z',
      updated_at: '2026-03-02T16:45:12.000Z',
    },
  ],
  has_more: false,
  next_cursor: null,
};

export const conversionFromTranscriptExample = { ...artifactExample, id: 'art_ec766tad3aasevjeh7us16n4', recording_id: null };
export const conversionOnRecordingExample = artifactExample;

export const transcriptionExample = {
  id: 'trn_hlji62ro1puvlqsgoakvk0vn',
  object: 'transcription',
  text: 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them',
  language: 'en',
  language_confidence: null,
  duration_seconds: 8.45,
  segments: [
    { start: 0.31, end: 4.12, text: 'and mister john dashwood had then leisure to consider', speaker: null },
    { start: 4.12, end: 8.2, text: 'how much there might be prudently in his power to do for them', speaker: null },
  ],
  speakers: [],
  model: 'pocketsphinx-en-us',
  credits_charged: 1,
  recording_id: null,
};

export const transcriptionJobQueuedExample = {
  id: 'trn_q4kfn1v2c7tmd0bhe9s3lu8a',
  object: 'transcription',
  status: 'queued',
  progress: 0,
  duration_seconds: 7212.4,
  processed_seconds: 0,
  created_at: '2026-03-02T16:45:12.000Z',
  started_at: null,
  finished_at: null,
  error: null,
  credits_reserved: 121,
  text: null,
  language: 'en',
  language_confidence: null,
  segments: null,
  speakers: null,
  model: null,
  credits_charged: null,
  recording_id: null,
  webhook_url: 'https://example.com/hooks/murmur',
  webhook: null,
};

export const transcriptionJobCompletedExample = {
  ...transcriptionJobQueuedExample,
  ...transcriptionExample,
  status: 'completed',
  progress: 1,
  duration_seconds: transcriptionExample.duration_seconds,
  processed_seconds: transcriptionExample.duration_seconds,
  started_at: '2026-03-02T16:45:12.400Z',
  finished_at: '2026-03-02T16:45:20.100Z',
  credits_reserved: 1,
  webhook: {
    id: 'msg_2k9d7f1c4b8a6e3m5n0p7q1r',
    event: 'transcription.completed',
    state: 'delivered',
    attempts: 1,
    last_status_code: 204,
    last_error: null,
    next_attempt_at: null,
    delivered_at: '2026-03-02T16:45:20.300Z',
  },
};

export const transcriptionJobListExample = { object: 'list', data: [transcriptionJobCompletedExample], has_more: false, next_cursor: null };

export const transcriptionEventsExample =
  `id: 1\nevent: processing\ndata: ${JSON.stringify({ ...transcriptionJobQueuedExample, status: 'processing', progress: 0.42 })}\n\n` +
  `id: 2\nevent: completed\ndata: ${JSON.stringify(transcriptionJobCompletedExample)}\n\n`;

export const transcriptionTextExample = transcriptionExample.text;
/** The example's captions as the captions room cuts them (42 characters a line, 1–7 s a cue). */
export const transcriptionSrtExample = toSrtFromTimeline(timelineFromSegments(transcriptionExample.segments));
export const transcriptionVttExample = toVttFromTimeline(timelineFromSegments(transcriptionExample.segments));

/** The example recording's transcript as text and captions, its speakers named. */
const recordingTimeline = {
  text: recordingExample.transcript.text,
  segments: recordingExample.transcript.segments,
  words: [],
  speakers: recordingExample.transcript.speakers,
};
export const recordingTextExample = transcriptText(recordingTimeline);
export const recordingSrtExample = toSrtFromTimeline(recordingTimeline);
export const recordingVttExample = toVttFromTimeline(recordingTimeline);

/** A complete (silent, zero-length) WAV file, so the JSON upload example is real base64 audio. */
export const listenTokenExample = {
  object: 'listen_token',
  token: 'lst_Hx3kP9qL2mVbN8cR4tYwZ1aE6sD0fG7jU5iO3pK2lQw',
  expires_at: '2026-03-02T16:45:30.000Z',
  expires_in: 60,
};

export const AUDIO_BASE64_EXAMPLE = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=';

/** The contract's own refusal of a page size too large: the example of invalid_request. */
function pageSizeRefusal(): { message: string; param: string | null } {
  try {
    pageSizeOf(MAX_PAGE_LIMIT + 1, 'limit', { zeroMeansDefault: false });
  } catch (err) {
    if (err instanceof MurmurError) return { message: err.message, param: err.param };
  }
  throw new Error('pageSizeOf took a page over MAX_PAGE_LIMIT');
}

/** A realistic `message` and `param` per code where the default message is not the usual answer. */
const ERROR_DETAILS: Partial<Record<ErrorCode, { message: string; param: string | null }>> = {
  invalid_request: pageSizeRefusal(),
  insufficient_scope: {
    message:
      'This API key is read-only, and POST /api/v1/transcribe spends AI Credits or changes state (the "ai" scope). Use a key with full access, or create one in Settings → Developer (or `npm run admin -- keys create --email you@example.com`).',
    param: null,
  },
  missing_audio: { message: ERROR_CODES.missing_audio.message, param: 'audio' },
  unsupported_audio: { message: ERROR_CODES.unsupported_audio.message, param: 'audio' },
  audio_too_large: { message: ERROR_CODES.audio_too_large.message, param: 'audio' },
  idempotency_conflict: {
    message: 'This Idempotency-Key was used with other parameters. Use a new key for a new request.',
    param: 'Idempotency-Key',
  },
  rate_limit_exceeded: { message: 'Too many AI requests: the limit is 10 per 60 seconds. Retry in 42 seconds (Retry-After).', param: null },
};

/** The error body a client receives for `code`. */
export function errorExample(code: ErrorCode) {
  const spec = ERROR_CODES[code];
  const detail = ERROR_DETAILS[code] ?? { message: spec.message, param: null };
  return { error: { type: spec.type, code, message: detail.message, param: detail.param, request_id: REQUEST_ID } };
}

export const searchResultListExample = {
  object: 'list',
  data: [
    {
      object: 'search_result',
      type: 'recording',
      id: REC_ID,
      passage_id: 'psg_3kq8m1v0c7d2h5n9r4t6b8jf',
      title: 'Checkout redesign planning',
      passage: 'We agreed to ship the new payment page in March.',
      highlights: [{ offset: 29, length: 12 }],
      start: 4.2,
      end: 7.9,
      speaker: 'S2',
      speaker_name: 'Dev',
      thread_item_id: null,
      score: 0.166667,
      created_at: '2026-03-12T14:30:00.000Z',
      url: `/api/v1/recordings/${REC_ID}`,
    },
    {
      object: 'search_result',
      type: 'thought_thread',
      id: THREAD_ID,
      passage_id: 'psg_7ve1d0k2q9m4s8a3c6h5n1tb',
      title: 'Checkout redesign',
      passage: 'Ask finance whether the payment page can launch before the audit.',
      highlights: [{ offset: 25, length: 12 }],
      start: null,
      end: null,
      speaker: null,
      speaker_name: null,
      thread_item_id: 'thi_4r2m8c0v6q1k9d3h5n7t2bse',
      score: 0.090909,
      created_at: '2026-03-12T14:35:00.000Z',
      url: `/api/v1/thought-threads/${THREAD_ID}`,
    },
  ],
  has_more: false,
  next_cursor: null,
  ranking: 'text',
};

export const answerExample = {
  id: 'ans_5m2q8c1v7d0h3k9n4r6t2bjf',
  object: 'answer',
  question: 'When does the new payment page ship?',
  answer: 'We agreed to ship the new payment page in March. [1]',
  mode: 'extractive',
  citations: [
    {
      passage_id: searchResultListExample.data[0]!.passage_id,
      type: 'recording',
      id: REC_ID,
      title: 'Checkout redesign planning',
      start: 4.2,
      end: 7.9,
      speaker: 'S2',
      speaker_name: 'Dev',
      url: `/api/v1/recordings/${REC_ID}`,
    },
  ],
  passages: [searchResultListExample.data[0]!],
  credits_charged: 1,
  engine: 'local',
  created_at: '2026-03-12T15:02:11.000Z',
};

export const requestLogListExample = {
  object: 'list',
  data: [
    {
      object: 'request',
      id: REQUEST_ID,
      created_at: '2026-05-04T10:21:07.512Z',
      method: 'POST',
      route: '/api/v1/convert',
      tool: null,
      status: 200,
      error_code: null,
      latency_ms: 41.27,
      key_id: 'key_dhkkdm0vk036gfhi71bjhk7v',
      key_hint: 'svc_1a2b…9f0e',
      oauth_client_id: null,
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      bytes_in: 5120,
      bytes_out: 2210,
      credits_charged: 2,
    },
    {
      object: 'request',
      id: 'req_9a8b7c6d5e4f3a2b1c0d9e8f',
      created_at: '2026-05-04T10:20:51.003Z',
      method: 'POST',
      route: '/mcp',
      tool: 'get_recording',
      status: 200,
      error_code: 'not_found',
      latency_ms: 6.5,
      key_id: 'con_0f3ls8j2k1m4n5p6q7r8s9t0',
      key_hint: null,
      oauth_client_id: 'mcp_client_example',
      trace_id: null,
      bytes_in: 180,
      bytes_out: 412,
      credits_charged: 0,
    },
  ],
  has_more: true,
  next_cursor: 'eyJ2IjoxLCJsIjoicmVxdWVzdHMifQ.sig',
};
