/**
 * MCP tool results: a success carries the operation's JSON as structuredContent and a text block
 * (the same JSON, or a list page's summary: text-copy.ts says which); a business error (the contract's codes) is a result with isError, never a protocol error. The
 * error body travels as JSON text and in `_meta["dev.murmur/error"]`, not as structuredContent:
 * the SDK's Client validates structuredContent against the tool's output schema even on error
 * results, so an error body there would make conforming clients throw.
 */
import { MurmurError, toErrorBody } from '@murmur/contract';
import { currentContext } from '@murmur/kit';

/**
 * A link to one of the user's recordings in a tool result: its REST URL (GET with the same
 * credentials answers it), so a client can show or fetch it.
 */
export interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  mimeType: string;
}

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string } | ResourceLink>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Where an error result carries the contract's error body. */
export const ERROR_META_KEY = 'dev.murmur/error';

/** A success: `text` is what a client that does not read structuredContent sees (by default the value's JSON). */
export function toolSuccess(value: object, links: ResourceLink[] = [], text: string = JSON.stringify(value)): ToolResult {
  return { content: [{ type: 'text', text }, ...links], structuredContent: value as Record<string, unknown> };
}

/** The resource link of a recording, under the API's public URL. */
export function recordingLink(publicUrl: string, recording: { id: string; title: string }): ResourceLink {
  return {
    type: 'resource_link',
    uri: `${publicUrl}/api/v1/recordings/${encodeURIComponent(recording.id)}`,
    name: recording.id,
    title: recording.title,
    mimeType: 'application/json',
  };
}

/** The error result of a public error (kit's `asPublicError` makes one of anything). */
export function toolError(err: MurmurError): ToolResult {
  const body = toErrorBody(err, currentContext()?.requestId ?? '');
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true, _meta: { [ERROR_META_KEY]: body } };
}
