/**
 * How large a /mcp body may be. MCP has no file upload: the transcribe tool's audio travels as
 * base64 inside one JSON-RPC body, so the body limit is the one real limit and the audio limit
 * is derived from it (base64 is 4 characters per 3 bytes). The tool's description, its refusals
 * and docs/mcp.md all state these numbers; larger files go through REST, which streams up to
 * 500 MB.
 *
 * Only the audio (and a long transcript to convert) needs a large body. Anything up to
 * {@link MCP_SMALL_BODY_BYTES} is read before the message is looked at; a larger body is read on
 * only for a `tools/call` of transcribe or convert whose caller may make it (scope) and pays for
 * it (billing admits the call first), within {@link MCP_LARGE_BODIES_BUDGET_BYTES} for all such
 * bodies at once (handler.ts). Everything else is refused at the small limit.
 */
import { MurmurError } from '@murmur/contract';

/** The largest /mcp request body, in bytes (decimal, as docs/decisions/0009-transcription-uploads.md counts sizes). */
export const MCP_MAX_BODY_BYTES = 100_000_000;

/** The largest /mcp body read before its method, scope and billing are checked: ample for any message but audio and long transcripts. */
export const MCP_SMALL_BODY_BYTES = 1_000_000;

/**
 * What all large /mcp bodies being received at once may declare, together (a chunked body counts
 * as the largest allowed): one body of the largest size, or several smaller ones. Their audio is
 * held decoded until the tool sends it on (3/4 of their size), so this bounds the gateway's
 * memory whatever arrives: measured (bench mcp-bodies), a 99 MB body adds ~130–180 MB at its
 * peak, which keeps the gateway under its 512 Mi limit; two would not. A body past it gets 503
 * with Retry-After before anything is charged.
 */
export const MCP_LARGE_BODIES_BUDGET_BYTES = MCP_MAX_BODY_BYTES;

/** Room kept in the body for the JSON-RPC envelope and the tool's other arguments (a 500-character title escaped is ~3 kB). */
const ENVELOPE_BYTES = 100_000;

/** The longest `audio_base64` (after a data: URL prefix is removed) that fits in one body. */
export const MCP_MAX_BASE64_CHARS = MCP_MAX_BODY_BYTES - ENVELOPE_BYTES;

/** The largest audio file the transcribe tool takes: 74,925,000 bytes. */
export const MCP_MAX_AUDIO_BYTES = (MCP_MAX_BASE64_CHARS / 4) * 3;

/** Bytes as users read them, rounded down so the stated limit is never more than the real one: "74.9 MB". */
export function formatMegabytes(bytes: number): string {
  return `${Math.floor(bytes / 100_000) / 10} MB`;
}

/** One sentence for the tool description, the refusals and the docs. */
export const MCP_AUDIO_LIMIT_TEXT =
  `up to ${formatMegabytes(MCP_MAX_AUDIO_BYTES)} of audio (its base64 fills a request of at most ${formatMegabytes(MCP_MAX_BODY_BYTES)}); ` +
  'send larger files to POST /api/v1/transcribe (up to 500 MB, streamed)';

/** The refusal of audio over the limit, whether the body or the base64 string was too long. */
export function mcpAudioTooLarge(): MurmurError {
  return new MurmurError('audio_too_large', `The MCP transcribe tool takes ${MCP_AUDIO_LIMIT_TEXT}.`, { param: 'audio_base64' });
}

/**
 * The refusal of a body over the small limit that is no transcribe or convert call (only audio
 * makes a body that large), or whose `method` and `params.name` come too late to tell.
 */
export function mcpBodyTooLarge(): MurmurError {
  return new MurmurError(
    'audio_too_large',
    `This MCP request is larger than ${formatMegabytes(MCP_SMALL_BODY_BYTES)}: only a tools/call of transcribe (${MCP_AUDIO_LIMIT_TEXT}) or convert may be, ` +
      'with `method` and `params.name` before `params.arguments`, as MCP clients send them. Nothing was charged.',
    { param: null },
  );
}

/** The Retry-After of {@link mcpBodiesBusy}: about what a large body takes to arrive on a fast link. */
const MCP_BUSY_RETRY_SECONDS = 5;

/** The refusal of a large body while others fill {@link MCP_LARGE_BODIES_BUDGET_BYTES}. */
export function mcpBodiesBusy(): MurmurError {
  return new MurmurError(
    'service_unavailable',
    'This server is receiving as many large MCP requests as it holds at once; nothing was charged. Retry in a few seconds, or send the audio to POST /api/v1/transcribe (streamed) or by `audio_url`.',
    { meta: { retry_after: String(MCP_BUSY_RETRY_SECONDS) } },
  );
}

/** Bytes of large bodies being received at once, held within a limit (one per gateway process). */
export class BodyBudget {
  private used = 0;

  constructor(readonly limit: number = MCP_LARGE_BODIES_BUDGET_BYTES) {}

  /** Takes `bytes` of the budget; returns what gives them back (once), or null when they do not fit. */
  reserve(bytes: number): (() => void) | null {
    if (this.used + bytes > this.limit) return null;
    this.used += bytes;
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      this.used -= bytes;
    };
  }

  /** Bytes taken now. */
  get inUse(): number {
    return this.used;
  }
}
