/**
 * Test support: workload identities for tests, which run several of our processes in one. Keys
 * of every workload are made once per test process (real Ed25519 pairs, the same code paths as
 * production); `testIdentityDir(w)` and `testIdentityStore()` write them where a process under
 * test (the admin CLI, a service started as a child process) loads them, in the two layouts a
 * process is given in production (docs/authorization.md#keys).
 */
import type * as grpc from '@grpc/grpc-js';
import { createHmac, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MurmurError, type OwnerField, ruleFor, type Workload, WORKLOAD_ROLES, WORKLOADS } from '@murmur/contract';
import { currentContext, newRequestId, runWithContext } from './context';
import { createClient, type ClientOptions, type PromiseClient } from './grpc-client';
import type { AccessControl, KeyVerifier } from './access/access-control';
import { generateWorkloadKeyPair, publicKeyFromPem, signingKeyFromPem, trustStoreOf, type SigningKey, type TrustStore } from './access/identity-keys';
import type { TokenMinter } from './access/tokens';
import { identityStoreAt } from './access/identity-store';
import { WorkloadIdentity } from './access/workload-identity';

interface Pems {
  privatePem: string;
  publicPem: string;
}

let pems: Map<Workload, Pems> | undefined;
let trust: TrustStore | undefined;
const dirs = new Map<Workload, string>();
let store: string | undefined;

function keys(): Map<Workload, Pems> {
  if (!pems) pems = new Map(WORKLOADS.map((w) => [w, generateWorkloadKeyPair()]));
  return pems;
}

/** This test process's key pairs as PEM, for a worker thread to adopt ({@link adoptTestKeys}) so both trust each other. */
export function testKeyPems(): [Workload, Pems][] {
  return [...keys()];
}

/** Takes the key pairs of the thread that started this one; before any other use of test identities. */
export function adoptTestKeys(from: [Workload, Pems][]): void {
  if (pems) throw new Error('test keys are already made in this thread');
  pems = new Map(from);
}

/** The trust store of this test process: every workload's public key. */
export function testTrust(): TrustStore {
  trust ??= trustStoreOf([...keys()].map(([w, p]) => [w, publicKeyFromPem(p.publicPem)]));
  return trust;
}

/** `w`'s signing key (for tests that make tokens by hand: forged, expired, wrong audience). */
export function testSigningKey(w: Workload): SigningKey {
  return signingKeyFromPem(w, keys().get(w)!.privatePem);
}

/** `w`'s identity, with every role its workload may hold. */
export function testIdentity(w: Workload): WorkloadIdentity {
  return new WorkloadIdentity(testSigningKey(w), testTrust(), WORKLOAD_ROLES[w]);
}

/** How `w`'s clients call (its workload token; for the app, with the admin role). */
export function testMinter(w: Workload): TokenMinter {
  return testIdentity(w).minter;
}

/** A key verifier for a test server that has no auth to ask: every developer key is refused. */
export const refuseEveryKey: KeyVerifier = async () => {
  throw new MurmurError('invalid_api_key', 'This test server verifies no developer keys (it runs without auth).');
};

/** The access control of a test server run as `w`. */
export function testAccess(w: Workload, verifyKey: KeyVerifier = refuseEveryKey): AccessControl {
  return testIdentity(w).accessControl(verifyKey);
}

/**
 * A folder as the chart mounts it for workload `w` (MURMUR_IDENTITY_DIR): its own `<w>.key` and
 * every workload's `.pub`, no other private key. Made once per workload.
 */
export function testIdentityDir(w: Workload): string {
  let d = dirs.get(w);
  if (d) return d;
  d = mkdtempSync(join(tmpdir(), `murmur-identity-${w}-`));
  writeFileSync(join(d, `${w}.key`), keys().get(w)!.privatePem, { mode: 0o600 });
  for (const [other, p] of keys()) writeFileSync(join(d, `${other}.pub`), p.publicPem);
  dirs.set(w, d);
  return d;
}

/** `npm start`'s key store (kit access/identity-store.ts) holding this test process's keys; its root. Made once. */
export function testIdentityStore(): string {
  if (store) return store;
  const s = identityStoreAt(mkdtempSync(join(tmpdir(), 'murmur-identity-store-')));
  for (const [w, p] of keys()) {
    mkdirSync(dirname(s.keyFile(w)), { recursive: true, mode: 0o700 });
    mkdirSync(s.publicDir, { recursive: true });
    writeFileSync(s.keyFile(w), p.privatePem, { mode: 0o600 });
    writeFileSync(s.publicFile(w), p.publicPem);
  }
  store = s.root;
  return store;
}

/** The owner a request names through `path` (rpc-policy's OwnerField), or '' when it names none. */
function ownerNamed(request: unknown, path: OwnerField): string {
  let at: unknown = request;
  for (const step of path.split('.')) {
    const [name, wanted] = step.split(':') as [string, string | undefined];
    const next = (at as Record<string, unknown> | undefined)?.[name];
    at = wanted === undefined ? next : (next as { $case?: string; value?: unknown } | undefined)?.$case === wanted ? (next as { value: unknown }).value : undefined;
  }
  return typeof at === 'string' ? at : '';
}

type ClientCtor<C> = Parameters<typeof createClient<C & grpc.Client>>[0];

/**
 * A client for tests of one service's domain rules, not of who may call it: each RPC is called
 * as a caller its rule admits — the app's admin where the rule allows it, else the first workload
 * it lists, else the gateway with a principal assertion for the user the request names (its owner
 * field; a call inside `runWithContext` with a principal keeps that one). Who may call what is
 * tested by gateway/test/rpc-access-matrix.test.ts.
 */
export function createPolicyClient<C extends grpc.Client>(Ctor: ClientCtor<C>, address: string, opts: ClientOptions = {}): PromiseClient<C> {
  const made = new Map<Workload, PromiseClient<C>>();
  const as = (w: Workload) => {
    let c = made.get(w);
    if (!c) {
      c = createClient(Ctor, address, { ...opts, identity: testMinter(w) }) as PromiseClient<C>;
      made.set(w, c);
    }
    return c as unknown as Record<string, (...args: unknown[]) => unknown>;
  };
  const out: Record<string, unknown> = { close: () => made.forEach((c) => c.close()) };
  for (const [name, def] of Object.entries(Ctor.service)) {
    const rule = ruleFor(def.path);
    if (!rule) throw new Error(`no access rule for ${def.path}`);
    if (rule.anyone || rule.admin) out[name] = (...args: unknown[]) => as('app')[name]!(...args);
    else if (rule.workloads?.length) out[name] = (...args: unknown[]) => as(rule.workloads![0]!)[name]!(...args);
    else {
      const owner = rule.user?.owner;
      out[name] = (...args: unknown[]) => {
        const ctx = currentContext();
        const userId = ctx?.principal?.userId ?? (owner && !def.requestStream ? ownerNamed(args[0], owner) : '');
        if (!userId) return as('gateway')[name]!(...args);
        return runWithContext({ requestId: ctx?.requestId ?? newRequestId(), principal: { userId, keyId: 'key_test' } }, () => as('gateway')[name]!(...args));
      };
    }
  }
  return out as PromiseClient<C>;
}

/**
 * A compact JWS made by hand with node:crypto — not with the library the services verify with —
 * for tests of tokens that must be refused (forged, expired, wrongly typed or issued): EdDSA with
 * an Ed25519 KeyObject, HS256 with a secret Buffer, or `alg: none` (no signature).
 */
export function handMadeJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key?: KeyObject | Buffer): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const alg = (header.alg as string | undefined) ?? 'EdDSA';
  const input = `${enc({ ...header, alg })}.${enc(claims)}`;
  if (alg === 'none' || !key) return `${input}.`;
  const signature = alg === 'HS256' ? createHmac('sha256', key as Buffer).update(input).digest() : cryptoSign(null, Buffer.from(input), key as KeyObject);
  return `${input}.${signature.toString('base64url')}`;
}
