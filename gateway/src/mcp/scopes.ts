/**
 * What a key's or an OAuth access token's scopes allow on /mcp (docs/oauth.md,
 * docs/authorization.md): `read` the seven read tools (search among them), `ai` transcribe, convert, ask and the tasks
 * (transcription jobs) they make. A full-access API key has both; a read-only key only `read`.
 * Checked on the JSON-RPC message before the SDK sees it, so a missing scope is an HTTP 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope"`, as the MCP authorization spec asks, and
 * a client can ask the user for more; a read-only key's 403 says how to get a key that may.
 */
import { scopeForTool, type OAuthScope } from '@murmur/contract';
import type { auth } from '@murmur/proto';
import { requireScope as requireCallScope } from '../http/authenticate';

/** The scope a JSON-RPC message needs, or null when any token may send it (initialize, tools/list, ping…). */
export function scopeNeeded(message: unknown): OAuthScope | null {
  const m = message as { method?: unknown; params?: { name?: unknown } } | null;
  if (typeof m?.method !== 'string') return null;
  if (m.method === 'tools/call') return typeof m.params?.name === 'string' ? scopeForTool(m.params.name) : null;
  if (m.method.startsWith('tasks/')) return 'ai';
  return null;
}

/** What the message asks for, as a refusal names it: "the transcribe tool", "tasks/get". */
function callOf(message: unknown): string {
  const m = message as { method?: unknown; params?: { name?: unknown } } | null;
  if (m?.method === 'tools/call' && typeof m.params?.name === 'string') return `the ${m.params.name.slice(0, 64)} tool`;
  return typeof m?.method === 'string' ? m.method.slice(0, 64) : 'this call';
}

export function requireScope(principal: auth.Principal, message: unknown): void {
  requireCallScope(principal, scopeNeeded(message), callOf(message));
}
