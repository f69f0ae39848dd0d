/**
 * How much audio the MCP `transcribe` tool takes. MCP has no file upload: the audio travels as
 * base64 inside one JSON-RPC body, which the gateway parses whole, so the body limit is the one
 * real limit and the audio limit is derived from it (base64 is 4 characters per 3 bytes).
 * The tool's description, its refusals and the README all state these numbers; larger files go
 * through REST, which streams up to 500 MB.
 */
import { MurmurError } from '@murmur/kit';

/** The largest /mcp request body, in bytes (decimal, as docs/decisions.md counts sizes). */
export const MCP_MAX_BODY_BYTES = 100_000_000;

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
