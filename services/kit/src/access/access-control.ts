/**
 * The one access check of every RPC, run by the kit's gRPC server before any handler: who is
 * calling (caller identity from metadata) and may they (the rule of rpc-policy.ts)? Handlers
 * never look at credentials; they get the owner already bound to the caller.
 *
 * Caller identity, from metadata:
 * - `x-murmur-workload`: a workload token → which of our processes calls (and its roles);
 * - `x-murmur-principal`: a principal assertion from the gateway or auth → the user;
 * - `authorization`: a developer key (`Bearer svc_…`), verified through auth (with auth's
 *   verification cache and its revocation guarantees) → the user. Used only when no assertion is
 *   present: an internal team calling directly or a client of Envoy's internal listener.
 * A token that does not verify is refused (`invalid_credentials`), never ignored.
 */
import type { Metadata } from '@grpc/grpc-js';
import { hasScope, insufficientScope, MurmurError, type OwnerField, type RpcRule } from '@murmur/contract';
import { PRINCIPAL_ASSERTION_HEADER, TokenRejected, WORKLOAD_TOKEN_HEADER, type TokenVerifier, type UserPrincipal, type VerifiedWorkload } from './tokens';

/** Verifies a developer key (`authorization` metadata as sent) and names its user; throws the contract's 401 codes. */
export type KeyVerifier = (authorization: string) => Promise<UserPrincipal>;

/** What a server needs to know its callers. */
export interface AccessControl {
  verifier: TokenVerifier;
  verifyKey: KeyVerifier;
}

/** Who is calling, as far as the credentials tell. */
export interface Caller {
  workload?: VerifiedWorkload;
  user?: UserPrincipal & { via: 'key' | 'assertion' };
}

/** The outcome of an allowed call: the caller, and the user whose data it is bound to (user calls). */
export interface Admission {
  caller: Caller;
  /** Set when the call is allowed as the user's own: the owner field must name this user. */
  boundUser?: string;
}

function single(metadata: Metadata, name: string): string | undefined {
  const values = metadata.get(name);
  if (values.length > 1) throw new MurmurError('invalid_credentials', `Send ${name} once.`);
  const v = values[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Reads and verifies the caller's credentials. */
export async function identifyCaller(access: AccessControl, metadata: Metadata): Promise<Caller> {
  const workloadToken = single(metadata, WORKLOAD_TOKEN_HEADER);
  const assertion = single(metadata, PRINCIPAL_ASSERTION_HEADER);
  const authorization = metadata.get('authorization');
  if (authorization.length > 1) throw new MurmurError('invalid_api_key', 'Send one `authorization` metadata entry, with one key.');
  const caller: Caller = {};
  try {
    // Verified before (the hot path: every caller reuses its tokens): no signature check, no wait.
    const workload = workloadToken ? (access.verifier.verifiedWorkload(workloadToken) ?? (await access.verifier.workloadToken(workloadToken))) : undefined;
    const user = assertion ? (access.verifier.verifiedAssertion(assertion) ?? (await access.verifier.principalAssertion(assertion))) : undefined;
    if (workload) caller.workload = workload;
    if (user) caller.user = { userId: user.userId, keyId: user.keyId, scopes: user.scopes ?? [], via: 'assertion' };
  } catch (err) {
    if (err instanceof TokenRejected) throw new MurmurError('invalid_credentials');
    throw err;
  }
  const key = authorization[0];
  if (!caller.user && typeof key === 'string' && key !== '') {
    const user = await access.verifyKey(key);
    caller.user = { userId: user.userId, keyId: user.keyId, scopes: user.scopes ?? [], via: 'key' };
  }
  return caller;
}

/** Who may call, in words, for a refusal's message. */
function whoMay(rule: RpcRule): string {
  const who: string[] = [];
  if (rule.user) who.push("a developer's key (for their own data)");
  if (rule.workloads?.length) who.push(`the ${rule.workloads.join(', ')} workload${rule.workloads.length > 1 ? 's' : ''}`);
  if (rule.admin) who.push("the app's admin");
  return who.join(' or ') || 'nobody';
}

/**
 * Refuses a user's call to `path` when its rule needs a scope the user's key or token lacks (a
 * read-only key calling an AI RPC): `insufficient_scope`, PERMISSION_DENIED. The same check
 * serves the services' access check and Envoy's ext_authz (auth), so the two never disagree.
 */
export function requireRuleScope(path: string, rule: RpcRule | undefined, user: UserPrincipal): void {
  const needed = rule?.user?.scope;
  if (needed && !hasScope(user.scopes ?? [], needed)) throw insufficientScope(user.keyId, needed, path);
}

/**
 * The decision, pure: may `caller` call the method of `rule`? A user's own credentials bind the
 * call to their data (preferred when the rule admits users, also when a workload carries them),
 * when they hold the scope the rule names; otherwise a named workload, or the admin role, acts
 * for whoever the request names. No rule: nobody. No credentials: `missing_api_key`; credentials
 * that do not qualify: `permission_denied`; a user's key or token without the scope:
 * `insufficient_scope`.
 */
export function decide(path: string, rule: RpcRule | undefined, caller: Caller): Admission {
  if (!rule) throw new MurmurError('permission_denied', `${path} has no access rule, so nobody may call it.`);
  if (rule.anyone) return { caller };
  if (caller.user && rule.user) {
    requireRuleScope(path, rule, caller.user);
    return { caller, boundUser: caller.user.userId };
  }
  const w = caller.workload;
  if (w && rule.workloads?.includes(w.workload)) return { caller };
  if (w && rule.admin && w.workload === 'app' && w.roles.includes('admin')) return { caller };
  if (!w && !caller.user) {
    throw new MurmurError('missing_api_key', `${path} needs credentials: send your API key as \`authorization: Bearer svc_…\` metadata.`);
  }
  throw new MurmurError('permission_denied', `${path} may be called by ${whoMay(rule)} only.`);
}

/** The message of a call naming an owner other than its caller (the access matrix tells it from a handler's not_found by it). */
export const FOREIGN_OWNER_MESSAGE = 'No such user. A call may only act on its own user, named by its key.';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * Fills or checks the owner field of a request for a call bound to `userId`; a foreign owner is
 * `not_found`. `field` is a dotted path whose steps are fields (`ownerId`) or oneof cases
 * (`payload:config`, ts-proto's `{ $case, value }`). A oneof on the way is entered only in the
 * named case (a stream message of another case carries no owner). A oneof at the end (GetUser's
 * `lookup:userId`) is set to the owner when absent, and any other case (an email) is `not_found`:
 * a user names only themselves, by id.
 */
export function bindOwner(request: unknown, field: OwnerField, userId: string): void {
  const steps = field.split('.');
  const last = steps.pop()!;
  const foreign = () => new MurmurError('not_found', FOREIGN_OWNER_MESSAGE);
  let parent: unknown = request;
  for (const step of steps) {
    if (!isRecord(parent)) return;
    const [name, wanted] = step.split(':') as [string, string | undefined];
    const next = parent[name];
    parent = wanted === undefined ? next : isRecord(next) && next.$case === wanted ? next.value : undefined;
  }
  if (!isRecord(parent)) return;
  const [name, wanted] = last.split(':') as [string, string | undefined];
  const given = parent[name];
  if (wanted !== undefined) {
    if (given === undefined) parent[name] = { $case: wanted, value: userId };
    else if (!isRecord(given) || given.$case !== wanted || given.value !== userId) throw foreign();
    return;
  }
  if (given === '' || given === undefined) parent[name] = userId;
  else if (given !== userId) throw foreign();
}
