/**
 * `components.schemas` of the OpenAPI document, generated with `z.toJSONSchema` (JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1) from the zod shapes in operations/shapes.ts and the
 * convert input in operations/schemas.ts — the one description of every public JSON body, the
 * same one MCP declares as its tools' schemas. Nothing here restates a field by hand except the
 * transcription upload, whose body is parsed as a stream rather than by a zod schema.
 */
import { z } from 'zod';
import {
  DEFAULT_REDACTION_STYLE,
  ERROR_CODES,
  type ErrorCode,
  type ErrorType,
  KEYTERM_PATTERN_SOURCE,
  LANGUAGE_OPTION,
  MAX_KEYTERM_CHARS,
  MAX_KEYTERMS,
  MAX_LANGUAGE_CHARS,
  MAX_SPEAKERS_EXPECTED,
  MAX_TITLE_CHARS,
  REDACTION_POLICIES,
  REDACTION_STYLES,
  REQUEST_ID_PATTERN,
} from '@murmur/contract';
import { MAX_AUDIO_URL_CHARS, MAX_AUDIO_URL_REDIRECTS } from '../upload/fetch-audio';
import * as shapes from '../operations/shapes';
import { askInputSchema, convertInputSchema, speakerNamesInputSchema } from '../operations/schemas';
import { MAX_AUDIO_BYTES } from '../operations/transcribe';
import { TRANSCRIPT_FORMATS } from '../operations/transcript-formats';

/** A JSON Schema (2020-12) as plain data. */
export type JsonSchema = Record<string, unknown>;

/**
 * Every public code the REST API answers with. MCP-only codes (the Origin check and the
 * authorization server's grant refusals), gRPC's caller checks (which the gateway answers as
 * internal_error) and the app's key and connection management (`api_key_limit_reached`,
 * `oauth_connection_limit_reached`) are no REST answer.
 * `insufficient_scope` is: a read-only key's AI call.
 */
const NOT_REST = ['forbidden_origin', 'invalid_credentials', 'permission_denied', 'invalid_grant', 'api_key_limit_reached', 'oauth_connection_limit_reached'];
export const REST_ERROR_CODES = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => !NOT_REST.includes(code));

const ERROR_TYPES = [...new Set(REST_ERROR_CODES.map((code) => ERROR_CODES[code].type))] as [ErrorType, ...ErrorType[]];

/** The error body of DESIGN.md §3 with its closed sets of types and codes. */
const errorBodyShape = shapes.errorShape.extend({
  error: shapes.errorShape.shape.error.extend({
    type: z.enum(ERROR_TYPES).describe('The family of the error; branch on `code` for the exact case.'),
    code: z.enum(REST_ERROR_CODES as [ErrorCode, ...ErrorCode[]]).describe('The exact case; stable, safe to branch on.'),
    message: z.string().describe('What went wrong and what to do next, for a human; may change.'),
    param: z.string().nullable().describe('The offending parameter, field or header, or null.'),
    request_id: z
      .string()
      .regex(REQUEST_ID_PATTERN)
      .describe('The X-Request-Id of the response; quote it to support.'),
  }),
});

/** The response shapes, by component name. */
const OUTPUT_SHAPES: Record<string, z.ZodType> = {
  Error: errorBodyShape,
  User: shapes.meShape,
  Usage: shapes.usageShape,
  Plan: shapes.planShape,
  RateLimit: shapes.rateLimitShape,
  RecordingSummary: shapes.recordingSummaryShape,
  Recording: shapes.recordingShape,
  RecordingList: shapes.listShape(shapes.recordingSummaryShape),
  Segment: shapes.segmentShape,
  Speaker: shapes.speakerShape,
  Word: shapes.wordShape,
  Artifact: shapes.artifactShape,
  ThoughtThreadSummary: shapes.threadSummaryShape,
  ThoughtThread: shapes.threadShape,
  ThoughtThreadList: shapes.listShape(shapes.threadSummaryShape),
  Folder: shapes.folderShape,
  FolderList: shapes.listShape(shapes.folderShape),
  KnowledgeBase: shapes.knowledgeBaseShape,
  KnowledgeBaseList: shapes.listShape(shapes.knowledgeBaseShape),
  Transcription: shapes.transcriptionShape,
  TranscriptionJob: shapes.transcriptionJobShape,
  TranscriptionJobList: shapes.listShape(shapes.transcriptionJobShape),
  ListenToken: shapes.listenTokenShape,
  SearchResult: shapes.searchResultShape,
  SearchResultList: shapes.searchPageShape,
  Answer: shapes.answerShape,
  RequestLogEntry: shapes.requestLogEntryShape,
  RequestLogList: shapes.listShape(shapes.requestLogEntryShape),
};

const TYPED_ID = /^([a-z]+)_…$/;
const SAFE_INT = 9007199254740991;

/**
 * What the shapes say in prose, made checkable: a time described as "ISO-8601 UTC time" is an
 * RFC 3339 `date-time`, an id described as `rec_…` has that prefix; zod's ±2^53 bounds of every
 * `.int()` are dropped as noise.
 */
function refine(schema: JsonSchema): void {
  if (schema.type === 'string' && schema.description === 'ISO-8601 UTC time') schema.format = 'date-time';
  const id = typeof schema.description === 'string' ? TYPED_ID.exec(schema.description) : null;
  if (schema.type === 'string' && id) {
    schema.pattern = `^${id[1]}_[0-9a-z]+$`;
    schema.description = `Opaque id with the \`${id[1]}_\` prefix.`;
  }
  if (schema.type === 'integer' && schema.minimum === -SAFE_INT) delete schema.minimum;
  if (schema.type === 'integer' && schema.maximum === SAFE_INT) delete schema.maximum;
}

/** The standalone keywords of a generated schema mean nothing inside an OpenAPI document. */
function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function generate(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, shape] of Object.entries(OUTPUT_SHAPES)) registry.add(shape, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
    override: (ctx) => refine(ctx.jsonSchema as JsonSchema),
  });
  const out: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) out[id] = strip(schema as JsonSchema);

  // POST /convert's body: the same zod schema the route parses with (input side), plus the one
  // rule checkConvertSource adds: exactly one of `transcript` and `recording_id`.
  out.ConvertRequest = {
    ...strip(z.toJSONSchema(convertInputSchema, { target: 'draft-2020-12', io: 'input' }) as JsonSchema),
    oneOf: [
      { title: 'From a transcript', required: ['transcript'] },
      { title: 'From a recording', required: ['recording_id'] },
    ],
  };
  out.AskRequest = strip(z.toJSONSchema(askInputSchema, { target: 'draft-2020-12', io: 'input' }) as JsonSchema);
  out.SpeakerNamesRequest = strip(z.toJSONSchema(speakerNamesInputSchema, { target: 'draft-2020-12', io: 'input' }) as JsonSchema);
  Object.assign(out, transcribeRequestSchemas());
  return out;
}

/** The options of POST /transcribe (upload/upload-fields.ts reads them; checkTranscribeOptions checks them). */
function transcribeOptions(): Record<string, JsonSchema> {
  return {
    language: {
      type: 'string',
      maxLength: MAX_LANGUAGE_CHARS,
      pattern: LANGUAGE_OPTION.source,
      description:
        'The spoken language as a code such as `en` or `pt-BR`, or `auto` to have it detected (whisper and OpenAI-compatible engines; pocketsphinx is English-only and answers `en`). Omitted, the engine detects it or uses its default. A language the engine cannot recognise is 400 naming the engine.',
      examples: ['en'],
    },
    words: {
      type: 'boolean',
      default: false,
      description: 'Answer each word with its times, confidence and speaker (`words`). An engine without word times refuses it with 400, before anything is charged.',
    },
    diarize: {
      type: 'boolean',
      default: false,
      description: 'Find who speaks when: segments and words carry `speaker` (S1, S2, …) and `speakers` lists them. Needs the diarization models on the server; without them 400 naming what is missing, before anything is charged. No extra charge.',
    },
    speakers_expected: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_SPEAKERS_EXPECTED,
      description: 'With `diarize`: how many speakers there are, when you know it.',
    },
    keyterms: {
      type: 'array',
      maxItems: MAX_KEYTERMS,
      items: { type: 'string', minLength: 1, maxLength: MAX_KEYTERM_CHARS, pattern: KEYTERM_PATTERN_SOURCE },
      description:
        'Names and terms to recognise (the whisper and OpenAI prompt). pocketsphinx recognises only words its dictionary has: a term with another word is 400 naming it. In multipart, one field per term.',
    },
    ...redactionOptionSchemas(),
    response_format: {
      type: 'string',
      enum: [...TRANSCRIPT_FORMATS],
      default: 'json',
      description: '`json` (the transcription object), `text` (plain text), `srt` (SubRip) or `vtt` (WebVTT).',
    },
    save: { type: 'boolean', default: false, description: 'Store the transcript as a recording in your library; its id comes back as `recording_id`.' },
    title: { type: 'string', maxLength: MAX_TITLE_CHARS, description: 'Title of the saved recording (only with `save`).' },
    folder_id: { type: 'string', description: 'Folder of yours to save the recording in (only with `save`).' },
    webhook_url: {
      type: 'string',
      format: 'uri',
      maxLength: 2048,
      description:
        'POST /transcriptions only: a public https endpoint told when the job ends (Standard Webhooks, signed with your `whsec_` secret from Settings → Developer; without one the request is refused with 400 `invalid_request`, before anything is held or charged). Plain `http://` is refused. It may come before or after the file. Omitted, your default endpoint is used, if you set one.',
      examples: ['https://example.com/hooks/murmur'],
    },
    audio_url: {
      type: 'string',
      format: 'uri',
      maxLength: MAX_AUDIO_URL_CHARS,
      description: `Instead of the audio in the body: a public http(s) link to it, downloaded by Murmur (up to ${MAX_AUDIO_BYTES.toLocaleString('en-US')} bytes, ports 80 and 443, at most ${MAX_AUDIO_URL_REDIRECTS} redirects). Send exactly one of the audio and \`audio_url\`.`,
      examples: ['https://example.com/recordings/standup.mp3'],
    },
  };
}

/** `redact_pii` and its two companions (the contract's redaction-rules.ts). */
function redactionOptionSchemas(): Record<string, JsonSchema> {
  return {
    redact_pii: {
      type: 'boolean',
      default: false,
      description:
        'Redact personal data from everything answered and stored (text, segments, words, captions, the saved recording): the original is never stored. Spoken forms count ("five five five …", "john at example dot com"). No extra charge.',
    },
    redact_pii_policies: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: [...REDACTION_POLICIES] },
      description: 'With `redact_pii`: what to redact (default all). In multipart, one field per policy.',
    },
    redact_pii_sub: {
      type: 'string',
      enum: [...REDACTION_STYLES],
      default: DEFAULT_REDACTION_STYLE,
      description: 'With `redact_pii`: `entity_name` writes `[PHONE_NUMBER]`, `numbered_entity_name` `[PHONE_NUMBER_1]` (the same value, the same number), `mask` one `#` per character.',
    },
  };
}

function transcribeRequestSchemas(): Record<string, JsonSchema> {
  const ordering = 'Options go before the audio: it is transcribed while it uploads.';
  return {
    TranscribeMultipartRequest: {
      type: 'object',
      description: `A multipart upload: the options as text fields, then the file part \`audio\`. ${ordering} \`save\` is \`true\`/\`false\` (or \`1\`/\`0\`).`,
      properties: {
        ...transcribeOptions(),
        audio: {
          type: 'string',
          contentMediaType: 'application/octet-stream',
          description: `The audio file, any common format (WAV, MP3, M4A, OGG, FLAC, WebM…), up to ${MAX_AUDIO_BYTES.toLocaleString('en-US')} bytes.`,
        },
      },
      oneOf: [
        { title: 'The file', required: ['audio'] },
        { title: 'A link', required: ['audio_url'] },
      ],
      additionalProperties: false,
    },
    TranscribeJsonRequest: {
      type: 'object',
      description: `A JSON body with the audio base64-encoded; put \`audio_base64\` last. ${ordering}`,
      properties: {
        ...transcribeOptions(),
        audio_base64: {
          type: 'string',
          contentEncoding: 'base64',
          description: `The audio, base64 (standard or URL-safe alphabet; a \`data:audio/…;base64,\` prefix is accepted), up to ${MAX_AUDIO_BYTES.toLocaleString('en-US')} bytes once decoded.`,
        },
      },
      oneOf: [
        { title: 'Base64', required: ['audio_base64'] },
        { title: 'A link', required: ['audio_url'] },
      ],
      additionalProperties: false,
    },
  };
}

let cached: Record<string, JsonSchema> | undefined;

/** `components.schemas`, generated once. */
export function componentSchemas(): Record<string, JsonSchema> {
  cached ??= generate();
  return structuredClone(cached);
}

/** A `$ref` to a component schema. */
export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}
