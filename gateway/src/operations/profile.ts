/** GET /me and GET /usage (and MCP get_usage): who the key belongs to, their plan and usage. */
import type { OperationContext } from './context';
import { iso, presentUsage } from './present';

export async function getUsage(ctx: OperationContext) {
  const { usage } = await ctx.clients.billing.getUsage({ userId: ctx.principal.userId });
  if (!usage) throw new Error('billing returned no usage');
  return presentUsage(usage);
}

export async function getMe(ctx: OperationContext) {
  const [{ user }, usage, stats] = await Promise.all([
    ctx.clients.auth.getUser({ lookup: { $case: 'userId', value: ctx.principal.userId } }),
    getUsage(ctx),
    ctx.clients.library.getLibraryStats({ ownerId: ctx.principal.userId }),
  ]);
  if (!user) throw new Error('auth returned no user');
  return {
    id: user.id,
    object: 'user' as const,
    email: user.email,
    name: user.name,
    created_at: iso(user.createdAt),
    plan: usage.plan ? { id: usage.plan.id, name: usage.plan.name } : null,
    usage,
    library: {
      recordings: stats.recordings,
      thought_threads: stats.thoughtThreads,
      folders: stats.folders,
      knowledge_bases: stats.knowledgeBases,
      recorded_seconds: stats.recordedSeconds,
    },
    api_key: { id: ctx.principal.keyId, expires_at: iso(ctx.principal.keyExpiresAt) },
  };
}
