/**
 * The access decision (kit access/access-control.ts) as a table: rule kinds × callers; and the
 * owner binding of requests, oneofs included. Key material on disk: identity-keys.test.ts.
 */
import { MurmurError, type RpcRule } from '@murmur/contract';
import { bindOwner, decide, type Caller } from '@murmur/kit';

const P = '/murmur.test.v1.TestService/Do';
const user: Caller = { user: { userId: 'usr_a', keyId: 'key_a', via: 'key' } };
const gateway: Caller = { workload: { workload: 'gateway', roles: [] } };
const gatewayForUser: Caller = { ...gateway, user: { userId: 'usr_a', keyId: 'key_a', via: 'assertion' } };
const conversion: Caller = { workload: { workload: 'conversion', roles: [] } };
const admin: Caller = { workload: { workload: 'app', roles: ['admin'] } };
const appWithoutRole: Caller = { workload: { workload: 'app', roles: [] } };
const nobody: Caller = {};

const readOnlyKey: Caller = { user: { userId: 'usr_a', keyId: 'key_a', scopes: ['read'], via: 'key' } };
const fullKey: Caller = { user: { userId: 'usr_a', keyId: 'key_a', scopes: ['read', 'ai'], via: 'key' } };
const gatewayForReadOnly: Caller = { ...gateway, user: { userId: 'usr_a', keyId: 'key_a', scopes: ['read'], via: 'assertion' } };
const readToken: Caller = { user: { userId: 'usr_a', keyId: 'con_a', scopes: ['read'], via: 'assertion' } };

const OWN: RpcRule = { user: { owner: 'ownerId' } };
const AI: RpcRule = { user: { owner: 'userId', scope: 'ai' } };
const SERVICE: RpcRule = { workloads: ['conversion'] };
const ADMIN: RpcRule = { admin: true };
const BOTH: RpcRule = { user: { owner: 'ownerId' }, workloads: ['conversion'], admin: true };
const ANYONE: RpcRule = { anyone: true };

function outcome(rule: RpcRule | undefined, caller: Caller): string {
  try {
    const a = decide(P, rule, caller);
    return a.boundUser ? `bound ${a.boundUser}` : 'allow';
  } catch (err) {
    return (err as MurmurError).code;
  }
}

describe('decide', () => {
  it.each<[string, RpcRule | undefined, Caller, string]>([
    ['a user on their own data', OWN, user, 'bound usr_a'],
    ['the gateway for a user', OWN, gatewayForUser, 'bound usr_a'],
    ['the gateway alone on a user RPC', OWN, gateway, 'permission_denied'],
    ['nobody on a user RPC', OWN, nobody, 'missing_api_key'],
    ['a listed workload', SERVICE, conversion, 'allow'],
    ['an unlisted workload', SERVICE, gateway, 'permission_denied'],
    ['a user on a workload RPC', SERVICE, user, 'permission_denied'],
    ['the app admin on an admin RPC', ADMIN, admin, 'allow'],
    ['the app without its admin role', ADMIN, appWithoutRole, 'permission_denied'],
    ['a user on an admin RPC', ADMIN, user, 'permission_denied'],
    ['a user where users, workloads and admin may call: bound', BOTH, user, 'bound usr_a'],
    ['the admin there: acts for whoever the request names', BOTH, admin, 'allow'],
    ['anyone on an open RPC', ANYONE, nobody, 'allow'],
    ['anyone on an RPC without a rule', undefined, admin, 'permission_denied'],
    ['a full-access key on an AI RPC', AI, fullKey, 'bound usr_a'],
    ['a key of an auth older than key scopes (none said) on an AI RPC', AI, user, 'bound usr_a'],
    ['a read-only key on an AI RPC', AI, readOnlyKey, 'insufficient_scope'],
    ["the gateway's assertion for a read-only key on an AI RPC", AI, gatewayForReadOnly, 'insufficient_scope'],
    ['a read-only key on its own data', OWN, readOnlyKey, 'bound usr_a'],
    ['the admin on an AI RPC (no user to judge)', { ...AI, admin: true }, admin, 'allow'],
  ])('%s', (_name, rule, caller, expected) => {
    expect(outcome(rule, caller)).toBe(expected);
  });

  it('tells a read-only key how to get one that may, and a token how to ask again', () => {
    const refusal = (caller: Caller) => {
      try {
        decide(P, AI, caller);
      } catch (err) {
        return err as MurmurError;
      }
      throw new Error('allowed');
    };
    const key = refusal(readOnlyKey);
    expect([key.code, key.httpStatus, key.meta]).toEqual(['insufficient_scope', 403, { scope: 'ai' }]);
    expect(key.message).toContain(`This API key is read-only, and ${P} spends AI Credits`);
    expect(key.message).toContain('Settings → Developer');
    expect(refusal(readToken).message).toContain('This access token lacks the "ai" scope');
  });
});

describe('bindOwner', () => {
  const code = (fn: () => void) => {
    try {
      fn();
      return 'ok';
    } catch (err) {
      return (err as MurmurError).code;
    }
  };

  it('fills an empty owner with the caller and accepts the caller', () => {
    const empty = { ownerId: '' };
    bindOwner(empty, 'ownerId', 'usr_a');
    expect(empty.ownerId).toBe('usr_a');
    expect(code(() => bindOwner({ userId: 'usr_a' }, 'userId', 'usr_a'))).toBe('ok');
  });

  it('refuses another owner as not_found', () => {
    expect(code(() => bindOwner({ ownerId: 'usr_b' }, 'ownerId', 'usr_a'))).toBe('not_found');
  });

  it("binds GetUser's lookup oneof: absent → the caller; another id or an email → not_found", () => {
    const absent: Record<string, unknown> = { lookup: undefined };
    bindOwner(absent, 'lookup:userId', 'usr_a');
    expect(absent.lookup).toEqual({ $case: 'userId', value: 'usr_a' });
    expect(code(() => bindOwner({ lookup: { $case: 'userId', value: 'usr_a' } }, 'lookup:userId', 'usr_a'))).toBe('ok');
    expect(code(() => bindOwner({ lookup: { $case: 'userId', value: 'usr_b' } }, 'lookup:userId', 'usr_a'))).toBe('not_found');
    expect(code(() => bindOwner({ lookup: { $case: 'email', value: 'b@example.com' } }, 'lookup:userId', 'usr_a'))).toBe('not_found');
  });

  it("binds the config of a Transcribe stream's first message and leaves an audio chunk alone", () => {
    const config = { payload: { $case: 'config', value: { userId: '' } } };
    bindOwner(config, 'payload:config.userId', 'usr_a');
    expect(config.payload.value.userId).toBe('usr_a');
    expect(code(() => bindOwner({ payload: { $case: 'config', value: { userId: 'usr_b' } } }, 'payload:config.userId', 'usr_a'))).toBe('not_found');
    const chunk = { payload: { $case: 'audioChunk', value: Buffer.alloc(1) } };
    expect(code(() => bindOwner(chunk, 'payload:config.userId', 'usr_a'))).toBe('ok');
  });
});
