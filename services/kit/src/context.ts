/**
 * Per-call context (request id) carried through async work with AsyncLocalStorage, so logs
 * and outgoing gRPC calls pick it up without threading it through every signature.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { REQUEST_ID_PATTERN } from '@murmur/contract';
import type { UserPrincipal } from './access/tokens';
import { poolRandomBytes } from './ids';

export interface CallContext {
  requestId: string;
  /**
   * The user this call acts for, once the gateway verified their key: the gateway's clients
   * attach a principal assertion for them (and what their key may do) to every internal call
   * made in this context.
   */
  principal?: UserPrincipal;
}

const storage = new AsyncLocalStorage<CallContext>();

export function runWithContext<T>(ctx: CallContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentContext(): CallContext | undefined {
  return storage.getStore();
}

/** A new request id, `req_` + 24 hex. */
export function newRequestId(): string {
  return `req_${poolRandomBytes(12).toString('hex')}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Accepts an incoming request id if it looks like one of ours, or Envoy's UUID (as
 * `req_<32 hex>`, the form ext_authz uses too, so one id runs from the edge's access log to
 * every service); otherwise mints one.
 */
export function acceptRequestId(value: string | undefined): string {
  if (value && REQUEST_ID_PATTERN.test(value)) return value;
  if (value && UUID.test(value)) return `req_${value.replace(/-/g, '').toLowerCase()}`;
  return newRequestId();
}
