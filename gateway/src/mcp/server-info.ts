/** How Murmur's MCP server names itself in both protocol eras (initialize and server/discover). */
export const SERVER_INFO = {
  name: 'murmur',
  title: 'Murmur',
  description: 'Transcribe audio, turn transcripts into summaries, emails and tables, and read your recordings, Thought Threads and folders.',
} as const;

/**
 * How long a client (or a shared cache) may keep what server/discover and tools/list answer on
 * 2026-07-28: the same for every caller, and changed only by a deploy.
 */
export const LIST_CACHE_HINTS = {
  'tools/list': { ttlMs: 5 * 60_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 5 * 60_000, cacheScope: 'public' },
} as const;
