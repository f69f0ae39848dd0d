/**
 * What an OAuth access token's scopes allow on /mcp (docs/oauth.md): `read` the six read tools,
 * `ai` transcribe and convert and the tasks (transcription jobs) they make. An API key (no
 * scopes) may do everything. Checked on the JSON-RPC message before the SDK sees it, so a
 * missing scope is an HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope"`, as the
 * MCP authorization spec asks, and a client can ask the user for more.
 */
import { MurmurError, scopeForTool, type OAuthScope } from '@murmur/kit';
import type { auth } from '@murmur/proto';

/** The scope a JSON-RPC message needs, or null when any token may send it (initialize, tools/list, ping…). */
export function scopeNeeded(message: unknown): OAuthScope | null {
  const m = message as { method?: unknown; params?: { name?: unknown } } | null;
  if (typeof m?.method !== 'string') return null;
  if (m.method === 'tools/call') return typeof m.params?.name === 'string' ? scopeForTool(m.params.name) : null;
  if (m.method.startsWith('tasks/')) return 'ai';
  return null;
}

export function requireScope(principal: auth.Principal, message: unknown): void {
  if (principal.scopes.length === 0) return; // an API key
  const needed = scopeNeeded(message);
  if (needed === null || principal.scopes.includes(needed)) return;
  throw new MurmurError('insufficient_scope', `This access token lacks the "${needed}" scope this call needs. Connect the client again and allow it.`, {
    meta: { scope: needed },
  });
}
