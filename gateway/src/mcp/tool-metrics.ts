/**
 * Every MCP tool call as metrics (decision 0041): counted by tool and the contract's error code of
 * an isError result, and timed by tool. The tool label is a tool of our table, or UNKNOWN_TOOL
 * for a name no tool has (a client's text never becomes a label). The same call leaves its tool
 * and error code in its call note (http/call-note.ts), where the request log and the HTTP
 * metrics read them.
 */
import { counterChildren, defineCounter, defineHistogram, histogramChildren, NO_ERROR, secondsSince } from '@murmur/kit';
import { callNote } from '../http/call-note';
import { ERROR_META_KEY, type ToolResult } from './tool-result';

const calls = defineCounter('murmur_mcp_tool_calls_total', 'MCP tool calls, by tool and the contract error code of an isError result (empty on success).', ['tool', 'error_code']);
const duration = defineHistogram('murmur_mcp_tool_call_duration_seconds', 'Seconds an MCP tool call took, from its arguments being checked to its result, by tool.', ['tool']);
const callChildren = counterChildren(calls, 2);
const durationChildren = histogramChildren(duration, 1);

/** The tool label of a call naming no tool of ours. */
export const UNKNOWN_TOOL = 'unknown';

/** The contract code an isError result carries (tool-result.ts's toolError), or NO_ERROR. */
function errorCodeOf(result: ToolResult): string {
  if (!result.isError) return NO_ERROR;
  const body = result._meta?.[ERROR_META_KEY] as { error?: { code?: unknown } } | undefined;
  return typeof body?.error?.code === 'string' ? body.error.code : NO_ERROR;
}

/** Counts one finished call of `tool` (a tool of ours, or UNKNOWN_TOOL) started at `startMs`, and notes it for the request log. */
export function recordToolCall(tool: string, result: ToolResult, startMs: number): void {
  const errorCode = errorCodeOf(result);
  callChildren.get(tool, errorCode).inc();
  durationChildren.get(tool).observe(secondsSince(startMs));
  const note = callNote();
  if (note) {
    note.tool = tool;
    if (errorCode !== NO_ERROR) note.errorCode = errorCode;
  }
}
