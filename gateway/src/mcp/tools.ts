/**
 * The eight MCP tools of DESIGN.md §4, each a thin adapter over the same operation as its REST
 * route (routes.ts names it: MCP_TOOL_OPERATIONS): same validation limits, same data, same
 * credits and rate limit, same error codes. No tool creates or revokes keys, and none reads the
 * profile or knowledge bases.
 */
import type { AudioUploadFields } from '../upload/upload-fields';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { billing } from '@murmur/proto';
import {
  invalidParam,
  MAX_CURSOR_CHARS,
  MAX_KEYTERM_CHARS,
  MAX_KEYTERMS,
  MAX_LANGUAGE_CHARS,
  MAX_SPEAKERS_EXPECTED,
  MAX_TITLE_CHARS,
  REDACTION_POLICIES,
  REDACTION_STYLES,
  SEARCH_QUERY_MAX_CHARS,
  SEARCH_SOURCE_TYPES,
} from '@murmur/contract';
import { DEFAULT_AUDIO_URL_POLICY, fetchAudioUrl, parseAudioUrl } from '../upload/fetch-audio';
import * as ops from '../operations';
import type { McpToolName } from '../routes';
import { readAudioArgument } from './audio-argument';
import { MCP_AUDIO_LIMIT_TEXT, MCP_MAX_BASE64_CHARS } from './body-limit';
import type { CallableTool, McpContext, ToolCall } from './tool-calls';
import { recordingLink } from './tool-result';
import { listPageText } from './text-copy';

const page = {
  limit: z.number().int().min(1).max(ops.MAX_PAGE_LIMIT).optional().describe(`Items per page, 1–${ops.MAX_PAGE_LIMIT} (default ${ops.DEFAULT_PAGE_LIMIT}).`),
  cursor: z.string().max(MAX_CURSOR_CHARS).optional().describe('The `next_cursor` of the previous page, unchanged.'),
};
const dateTime = z.string().datetime({ offset: true });

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const AI = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/** A tool, built once: its schemas and annotations (what tools/list shows) and its body. */
export interface ToolDefinition {
  name: McpToolName;
  config: { title: string; description: string; inputSchema: z.ZodObject; outputSchema: z.ZodObject; annotations: ToolAnnotations };
  /** Runs on arguments the input schema accepted. */
  run(ctx: McpContext, args: unknown, call: ToolCall): Promise<object>;
  /** For a tool that may run as an MCP task: starts it as a job and answers the job. */
  submitTask?(ctx: McpContext, args: unknown, call: ToolCall): Promise<Job>;
}

type Job = ReturnType<typeof ops.presentJob>;

function defineTool<In extends z.ZodRawShape, Out extends z.ZodRawShape>(
  name: McpToolName,
  config: { title: string; description: string; inputSchema: In; outputSchema: Out; annotations: ToolAnnotations },
  run: (ctx: McpContext, args: z.output<z.ZodObject<In>>, call: ToolCall) => Promise<object>,
  submitTask?: (ctx: McpContext, args: z.output<z.ZodObject<In>>, call: ToolCall) => Promise<Job>,
): ToolDefinition {
  // The text rule of every string argument (lone surrogates, NUL), before the tool runs.
  const checked = (args: unknown) => {
    ops.checkTextFields(args);
    return args as z.output<z.ZodObject<In>>;
  };
  return {
    name,
    // Objects made once (the SDK would wrap a raw shape in a new z.object on every call).
    config: { ...config, inputSchema: z.object(config.inputSchema), outputSchema: z.object(config.outputSchema) },
    run: (ctx, args, call) => run(ctx, checked(args), call),
    ...(submitTask ? { submitTask: (ctx: McpContext, args: unknown, call: ToolCall) => submitTask(ctx, checked(args), call) } : {}),
  };
}

/** The tool's arguments: the upload's options (but `response_format` and `webhook_url`, which are REST's), the audio and its name. */
type TranscribeArguments = Omit<AudioUploadFields, 'response_format' | 'webhook_url'> & { audio_base64?: string; filename?: string };

/**
 * The transcribe tool's checks and admission, whichever way it runs: exactly one of
 * `audio_base64` and `audio_url`, the options, then the audio's size and form, then billing's
 * admission (credits, cap, 10 a minute; a large body's call was admitted before its body was
 * read on, and keeps that admission), and only then the download of an `audio_url` — nothing
 * is charged for a call refused here or a download that fails.
 */
async function prepareTranscription(ctx: McpContext, args: TranscribeArguments, signal: AbortSignal) {
  if ((args.audio_base64 === undefined) === (args.audio_url === undefined)) {
    throw invalidParam(args.audio_url === undefined ? 'audio_base64' : 'audio_url', 'Send the audio one way: `audio_base64` or `audio_url`, exactly one of them.');
  }
  const policy = ctx.audioUrlPolicy ?? DEFAULT_AUDIO_URL_POLICY;
  const received = ctx.received?.audio;
  const inline = args.audio_base64 === undefined ? undefined : received ? received.argument() : readAudioArgument(args.audio_base64);
  if (args.audio_url !== undefined) parseAudioUrl(args.audio_url, policy);
  const { audio_base64: _audio, audio_url: _url, filename: _name, ...rest } = args;
  const options = await ops.checkTranscribeOptions(ctx, rest);
  if (inline?.problem) throw inline.problem;
  const admissionId = ctx.received?.admissionId ?? (await ops.admit(ctx, billing.Operation.OPERATION_TRANSCRIBE)).admissionId;
  const charge = { admissionId, idempotencyKey: `mcp_${crypto.randomUUID()}` };
  if (inline) return { audio: inline.open(), file: { filename: args.filename ?? '', contentType: inline.contentType }, options, charge };
  const fetched = await fetchAudioUrl(args.audio_url, policy, { maxBytes: ops.MAX_AUDIO_BYTES, signal });
  return { audio: fetched.stream, file: { filename: args.filename ?? fetched.filename, contentType: fetched.contentType }, options, charge };
}

/** Every tool, built once: the schemas are made at load time, not per request. */
export const TOOLS: readonly ToolDefinition[] = [
  defineTool(
    'list_recordings',
    {
      title: 'List recordings',
      description:
        'List the user’s voice recordings, newest first, with a short preview of each transcript. Use `q` for full-text search over titles and transcripts, `folder_id` to stay in one folder, and the date bounds to narrow by creation time. Page with `cursor`.',
      inputSchema: {
        ...page,
        q: z.string().max(SEARCH_QUERY_MAX_CHARS).optional().describe('Words to find in titles and transcripts ("quoted phrases", OR, -excluded).'),
        folder_id: z.string().optional().describe('Only recordings in this folder (fld_…).'),
        created_after: dateTime.optional().describe('Only recordings created after this ISO-8601 time.'),
        created_before: dateTime.optional().describe('Only recordings created before this ISO-8601 time.'),
      },
      outputSchema: ops.listShape(ops.recordingSummaryShape).shape,
      annotations: { title: 'List recordings', ...READ },
    },
    (ctx, args) =>
      ops.listRecordings(ctx, {
        ...args,
        created_after: args.created_after ? new Date(args.created_after) : undefined,
        created_before: args.created_before ? new Date(args.created_before) : undefined,
      }),
  ),

  defineTool(
    'get_recording',
    {
      title: 'Get a recording',
      description:
        'Read one recording: its full transcript with timed segments, its speakers (with the names the user gave them) and the artifacts (summaries, emails, …) made from it. With `words`, every word with its time and speaker too (long recordings hold thousands).',
      inputSchema: {
        recording_id: z.string().describe('The recording’s id (rec_…), from list_recordings.'),
        words: z.boolean().optional().describe('Include each word with its start and end time, confidence and speaker.'),
      },
      outputSchema: ops.recordingShape.shape,
      annotations: { title: 'Get a recording', ...READ },
    },
    (ctx, args) => ops.getRecording(ctx, args.recording_id, { words: args.words ?? false }),
  ),

  defineTool(
    'list_thought_threads',
    {
      title: 'List Thought Threads',
      description: 'List the user’s Thought Threads (running threads of notes, recordings, questions and answers), newest first. Page with `cursor`.',
      inputSchema: page,
      outputSchema: ops.listShape(ops.threadSummaryShape).shape,
      annotations: { title: 'List Thought Threads', ...READ },
    },
    (ctx, args) => ops.listThoughtThreads(ctx, args),
  ),

  defineTool(
    'get_thought_thread',
    {
      title: 'Get a Thought Thread',
      description: 'Read one Thought Thread with all its items in order and the sources (recordings, folders, knowledge bases) it draws context from.',
      inputSchema: { thread_id: z.string().describe('The thread’s id (thr_…), from list_thought_threads.') },
      outputSchema: ops.threadShape.shape,
      annotations: { title: 'Get a Thought Thread', ...READ },
    },
    (ctx, args) => ops.getThoughtThread(ctx, args.thread_id),
  ),

  defineTool(
    'list_folders',
    {
      title: 'List folders',
      description: 'List the user’s folders with how many recordings each holds, newest first. Use a folder’s id with list_recordings.',
      inputSchema: page,
      outputSchema: ops.listShape(ops.folderShape).shape,
      annotations: { title: 'List folders', ...READ },
    },
    (ctx, args) => ops.listFolders(ctx, args),
  ),

  defineTool(
    'search',
    {
      title: 'Search passages',
      description:
        'Find the moment: the passages of the user’s recordings, Thought Threads and knowledge bases that match `q`, best first. A recording is searched by speaker turn (or a 30–60 s window), so each result carries its start and end time in seconds and its speaker, with `highlights` (code-point offsets of the matching words in `passage`). ' +
        'Use it before get_recording to find where something was said; pass `recording_id` to search one recording. Page with `cursor`.',
      inputSchema: {
        q: z.string().max(SEARCH_QUERY_MAX_CHARS).describe('Words to find (all must match), "quoted phrases", OR, -excluded. Use distinctive words, not a whole question.'),
        type: z.array(z.enum(SEARCH_SOURCE_TYPES)).min(1).optional().describe('Only these sources (default: all).'),
        folder_id: z.string().optional().describe('Only recordings in this folder (fld_…).'),
        recording_id: z.string().optional().describe('Only this recording (rec_…).'),
        created_after: dateTime.optional().describe('Only sources created after this ISO-8601 time.'),
        created_before: dateTime.optional().describe('Only sources created before this ISO-8601 time.'),
        ...page,
      },
      outputSchema: ops.searchPageShape.shape,
      annotations: { title: 'Search passages', ...READ },
    },
    (ctx, args) =>
      ops.searchPassages(ctx, {
        ...args,
        type: args.type?.join(','),
        created_after: args.created_after ? new Date(args.created_after) : undefined,
        created_before: args.created_before ? new Date(args.created_before) : undefined,
      }),
  ),

  defineTool(
    'get_usage',
    {
      title: 'Get usage and limits',
      description: 'The user’s plan, remaining monthly and prepaid AI Credits, reset time, spending cap and spend, and the current rate-limit window. Check it before costly transcriptions or conversions.',
      inputSchema: {},
      outputSchema: ops.usageShape.shape,
      annotations: { title: 'Get usage and limits', ...READ },
    },
    (ctx) => ops.getUsage(ctx),
  ),

  defineTool(
    'transcribe',
    {
      title: 'Transcribe audio',
      description:
        `Transcribe an audio file (WAV, MP3, M4A, OGG, FLAC, WebM…), sent as base64 (${MCP_AUDIO_LIMIT_TEXT}) or as a public link in \`audio_url\` (up to 500 MB), into text with timed segments. Spends AI Credits by audio length and counts toward the 10-a-minute AI rate limit. With \`save\`, the transcript is also stored as a recording.`,
      inputSchema: {
        // No .max(): a longer string is audio_too_large (checked first in the tool), not a schema error.
        audio_base64: z
          .string()
          .min(1)
          .optional()
          .describe(`The audio file, base64-encoded (a data: URL prefix is accepted), at most ${MCP_MAX_BASE64_CHARS.toLocaleString('en-US')} characters. Give this or \`audio_url\`.`),
        audio_url: z
          .string()
          .min(1)
          .optional()
          .describe(`A public http(s) link to the audio file (up to 500 MB), which Murmur downloads. Give this or \`audio_base64\`.`),
        filename: z.string().max(255).optional().describe('Original file name, a hint for the decoder.'),
        language: z.string().max(MAX_LANGUAGE_CHARS).optional().describe('Spoken language code such as "en", or "auto" to detect it; omit to let the engine decide.'),
        save: z.boolean().optional().describe('Store the transcript as a new recording.'),
        title: z.string().max(MAX_TITLE_CHARS).optional().describe('Title of the saved recording (with save).'),
        folder_id: z.string().optional().describe('Folder of the saved recording (with save).'),
        words: z.boolean().optional().describe('Answer every word with its start and end time, confidence and speaker.'),
        diarize: z.boolean().optional().describe('Find who speaks when: segments and words get a speaker (S1, S2, …).'),
        speakers_expected: z.number().int().min(1).max(MAX_SPEAKERS_EXPECTED).optional().describe('With diarize: how many speakers there are, if known.'),
        keyterms: z
          .array(z.string().min(1).max(MAX_KEYTERM_CHARS))
          .max(MAX_KEYTERMS)
          .optional()
          .describe('Names and terms to recognise (e.g. product or people’s names).'),
        redact_pii: z.boolean().optional().describe('Redact personal data (e-mail addresses, phone and card numbers, …) from the transcript; the original is never stored.'),
        redact_pii_policies: z.array(z.enum(REDACTION_POLICIES)).min(1).optional().describe('With redact_pii: what to redact (default all).'),
        redact_pii_sub: z.enum(REDACTION_STYLES).optional().describe('With redact_pii: [PHONE_NUMBER] (entity_name, default), [PHONE_NUMBER_1] (numbered_entity_name) or ### (mask).'),
      },
      outputSchema: ops.transcriptionShape.shape,
      annotations: { title: 'Transcribe audio', ...AI },
    },
    async (ctx, args, call) => {
      const { audio, file, options, charge } = await prepareTranscription(ctx, args, call.signal);
      // With a progressToken the audio runs as a job and its progress is reported as it goes, so
      // a client that resets its timeout on progress can wait for long audio.
      if (call.progress) return ops.transcribeAsJob(ctx, audio, file, options, { ...charge, signal: call.signal }, call.progress);
      return ops.transcribe(ctx, audio, file, options, charge);
    },
    // As an MCP task (tasks.ts): the job is the task; the client polls it and asks for its result.
    async (ctx, args, call) => {
      const { audio, file, options, charge } = await prepareTranscription(ctx, args, call.signal);
      return ops.submitTranscription(ctx, audio, file, options, { ...charge, signal: call.signal });
    },
  ),

  defineTool(
    'convert',
    {
      title: 'Convert a transcript',
      description:
        'Turn a transcript — given inline, or a recording of the user’s by id — into an artifact: summary, email, spreadsheet, action_items, meeting_notes or key_points, in Markdown (default) or plain text (a spreadsheet becomes CSV). With recording_id the artifact is saved on that recording. Spends AI Credits by transcript length and counts toward the 10-a-minute AI rate limit.',
      inputSchema: ops.convertInputSchema.shape,
      outputSchema: ops.artifactShape.shape,
      annotations: { title: 'Convert a transcript', ...AI },
    },
    async (ctx, args) => {
      ops.checkConvertSource(args);
      // The arguments are read already: billing admits the call at the reservation, one round trip
      // fewer — unless a large body's call was admitted before its body was read on.
      return ops.convert(ctx, args, { admissionId: ctx.received?.admissionId ?? '', idempotencyKey: `mcp_${crypto.randomUUID()}` });
    },
  ),

  defineTool(
    'ask',
    {
      title: 'Ask the library',
      description:
        'Answer a question from the user’s own recordings, Thought Threads and knowledge bases, citing the passages used (with times and speakers). `mode` says whether an LLM wrote the answer (`generative`) or the best sentences were quoted (`extractive`, the local default). Spends AI Credits like a conversion of the passages read (nothing when nothing matches) and counts toward the 10-a-minute AI rate limit. To find moments without spending credits, use `search`.',
      inputSchema: ops.askInputSchema.shape,
      outputSchema: ops.answerShape.shape,
      annotations: { title: 'Ask the library', ...AI },
    },
    async (ctx, args) => ops.ask(ctx, args, { admissionId: ctx.received?.admissionId ?? '', idempotencyKey: `mcp_${crypto.randomUUID()}` }),
  ),
];

type SourceRef = { type: string; id: string; title: string };

/** Each recording among search results or citations once, in order of first appearance. */
function recordingsOf(refs: SourceRef[]): Array<{ id: string; title: string }> {
  const seen = new Map<string, { id: string; title: string }>();
  for (const r of refs) if (r.type === 'recording' && !seen.has(r.id)) seen.set(r.id, { id: r.id, title: r.title });
  return [...seen.values()];
}

/** The tools whose results name recordings, and how to find them there (for resource links). */
const RECORDINGS_IN: Readonly<Record<string, (value: object) => Array<{ id: string; title: string }>>> = {
  list_recordings: (value) => (value as { data: Array<{ id: string; title: string }> }).data,
  get_recording: (value) => [value as { id: string; title: string }],
  search: (value) => recordingsOf((value as { data: SourceRef[] }).data),
  ask: (value) => recordingsOf((value as { citations: SourceRef[] }).citations),
};

/** The list tools, and what their items are called in their page's text (text-copy.ts). */
const PAGE_NOUNS: Readonly<Record<string, string>> = {
  list_recordings: 'recordings',
  list_thought_threads: 'Thought Threads',
  list_folders: 'folders',
};

/**
 * Every tool bound to one request's caller, as tools/call runs it (tool-calls.ts), in both
 * protocol eras. `publicUrl` is the API's public address, for the results' resource links.
 */
export function callableTools(ctx: McpContext, publicUrl: string): Map<string, CallableTool> {
  const tools = new Map<string, CallableTool>();
  for (const tool of TOOLS) {
    const submitTask = tool.submitTask;
    const recordings = RECORDINGS_IN[tool.name];
    const noun = PAGE_NOUNS[tool.name];
    tools.set(tool.name, {
      name: tool.name,
      inputSchema: tool.config.inputSchema,
      outputSchema: tool.config.outputSchema,
      run: (args, call) => tool.run(ctx, args, call),
      ...(recordings ? { links: (value: object) => recordings(value).map((r) => recordingLink(publicUrl, r)) } : {}),
      ...(noun ? { pageText: (value: object) => listPageText(value, noun) } : {}),
      ...(submitTask ? { submitTask: (args: unknown, call: ToolCall) => submitTask(ctx, args, call) } : {}),
    });
  }
  return tools;
}
