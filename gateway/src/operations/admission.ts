/**
 * Admission of an AI call by billing — credits, spending cap and the rate limit, charging
 * nothing — shared by REST (before the body is read) and MCP (before the tool runs).
 */
import type { billing } from '@murmur/proto';
import type { OperationContext } from './context';

export async function admit(ctx: OperationContext, operation: billing.Operation): Promise<billing.AdmitAiRequestResponse> {
  return ctx.clients.billing.admitAiRequest({ userId: ctx.principal.userId, operation });
}
