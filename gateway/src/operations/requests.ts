/** The caller's request log (GET /requests): their own authenticated calls of the last 30 days, newest first. */
import { invalidParam, requireId, statusFilterOf } from '@murmur/contract';
import type { auth } from '@murmur/proto';
import type { OperationContext } from './context';
import { pageRequest, type PageInput } from './paging';

export interface RequestLogInput extends PageInput {
  /** A class (`4xx`) or an exact status (`404`). */
  status_code?: string;
  /** A route template (`/api/v1/recordings/{id}`) or `/mcp`. */
  route?: string;
  /** An MCP tool, or a JSON-RPC method (`tools/list`). */
  tool?: string;
  /** One of the caller's keys (key_…) or OAuth connections (con_…). */
  key_id?: string;
  created_after?: Date;
  created_before?: Date;
}

/** One entry as the API shows it (shapes.ts requestLogEntryShape). */
export function presentRequestLogEntry(e: auth.RequestLogEntry) {
  return {
    object: 'request' as const,
    id: e.requestId,
    created_at: (e.createdAt ?? new Date(0)).toISOString(),
    method: e.method,
    route: e.route,
    tool: e.tool || null,
    status: e.status,
    error_code: e.errorCode || null,
    latency_ms: Math.round(e.latencyUs / 10) / 100,
    key_id: e.keyId || null,
    key_hint: e.keyHint || null,
    oauth_client_id: e.clientId || null,
    trace_id: e.traceId || null,
    bytes_in: e.bytesIn,
    bytes_out: e.bytesOut,
    credits_charged: e.creditsCharged,
  };
}

function keyFilter(keyId: string | undefined): string {
  if (keyId === undefined) return '';
  return requireId(keyId.startsWith('con_') ? 'con' : 'key', keyId, 'key_id');
}

export async function listRequests(ctx: OperationContext, input: RequestLogInput) {
  if (input.created_after && input.created_before && input.created_after >= input.created_before) {
    throw invalidParam('created_before', '`created_before` must be later than `created_after`.');
  }
  const page = pageRequest(input);
  const res = await ctx.clients.auth.listRequests({
    ownerId: ctx.principal.userId,
    limit: page.limit,
    cursor: page.cursor,
    status: statusFilterOf(input.status_code),
    route: input.route ?? '',
    tool: input.tool ?? '',
    keyId: keyFilter(input.key_id),
    requestId: '',
    createdAfter: input.created_after,
    createdBefore: input.created_before,
  });
  return {
    object: 'list' as const,
    data: res.entries.map(presentRequestLogEntry),
    has_more: res.hasMore,
    next_cursor: res.hasMore ? res.nextCursor : null,
  };
}
