/** GET /me and GET /usage (and MCP get_usage): who the key belongs to, their plan and usage. */
import type { OperationContext } from './context';
import { presentMe, presentUsage } from './present';

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
  return presentMe(user, usage, stats, ctx.principal);
}
