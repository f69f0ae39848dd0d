/**
 * The two signed tokens that travel in gRPC metadata between our processes (JWTs, made and
 * checked with `jose`; see docs/decisions/0017-workload-identity.md):
 *
 * - a workload token (`x-murmur-workload`, typ `murmur-workload+jwt`): "I am workload W, calling
 *   workload A" — iss = kid = W, aud = A, optional `roles`, 5 minutes;
 * - a principal assertion (`x-murmur-principal`, typ `murmur-principal+jwt`): "this call is for
 *   user U, whose key K I verified" — iss = kid = the gateway or auth, aud = A, sub = U, `key` = K,
 *   `scope` = what K may do (space-separated, RFC 9068's claim; absent: every scope), 30 seconds. Assertions never leave our network: the gateway and Envoy attach them to internal
 *   hops only, so a revoked key stops at the next request that presents it.
 *
 * Both are bound to the audience workload (a token for library is refused by billing) and
 * verified offline with the issuer's public key. Minting reuses a token for half its life, and
 * verification caches a verified token until it expires, so an internal hop costs a map lookup,
 * not a signature check, on the hot path. Tokens are credentials: never logged.
 */
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { SigningKey, TrustStore } from './identity-keys';
import { isWorkload, PRINCIPAL_ISSUERS, WORKLOAD_ROLES, type Role, type Workload } from '@murmur/contract';

export const WORKLOAD_TOKEN_HEADER = 'x-murmur-workload';
export const PRINCIPAL_ASSERTION_HEADER = 'x-murmur-principal';

/** Lifetime of a workload token. */
export const WORKLOAD_TOKEN_SECONDS = 300;
/** Lifetime of a principal assertion: seconds, since it stands in for a key check. */
export const PRINCIPAL_ASSERTION_SECONDS = 30;
/** Clock difference tolerated between processes. */
export const CLOCK_TOLERANCE_SECONDS = 5;
/** Most tokens each cache holds; past it the cache starts over (never unbounded). */
const MAX_CACHED = 10_000;

const WORKLOAD_TYP = 'murmur-workload+jwt';
const PRINCIPAL_TYP = 'murmur-principal+jwt';

/** A user, as a principal assertion or a verified key names them. */
export interface UserPrincipal {
  userId: string;
  keyId: string;
  /**
   * What the key or access token may do (contract oauth-rules: read, ai); absent or empty: every
   * scope. The access check refuses an RPC whose rule needs a scope the caller lacks.
   */
  scopes?: readonly string[];
}

/** The cache key of a principal: its user, key and scopes (an assertion names all three). */
function principalSlot(audience: Workload, user: UserPrincipal): string {
  return `p|${audience}|${user.userId}|${user.keyId}|${(user.scopes ?? []).join(' ')}`;
}

export interface VerifiedWorkload {
  workload: Workload;
  roles: readonly Role[];
}

export interface VerifiedAssertion extends UserPrincipal {
  issuer: Workload;
}

/** Why a token was refused; the access check turns it into `invalid_credentials`. */
export class TokenRejected extends Error {}

const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Cached<T> {
  value: T;
  /** Unix seconds after which it is no longer used. */
  until: number;
}

/** A bounded cache of values that expire. */
class ExpiringCache<T> {
  private readonly map = new Map<string, Cached<T>>();
  get(key: string, now: number): T | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    if (hit.until > now) return hit.value;
    this.map.delete(key);
    return undefined;
  }
  set(key: string, value: T, until: number): void {
    if (this.map.size >= MAX_CACHED) this.map.clear();
    this.map.set(key, { value, until });
  }
}

/** Makes this workload's tokens (and, for principal issuers, assertions), reusing each for half its life. */
export class TokenMinter {
  private readonly tokens = new ExpiringCache<Promise<string>>();
  /** The same tokens once signed, for callers that can use one without waiting (the hot path). */
  private readonly ready = new ExpiringCache<string>();

  constructor(
    readonly signing: SigningKey,
    private readonly roles: readonly Role[] = [],
  ) {
    const allowed = WORKLOAD_ROLES[signing.workload];
    for (const r of roles) if (!allowed.includes(r)) throw new Error(`workload ${signing.workload} may not hold role ${r}`);
  }

  get workload(): Workload {
    return this.signing.workload;
  }

  get issuesAssertions(): boolean {
    return PRINCIPAL_ISSUERS.includes(this.signing.workload);
  }

  /** The workload token for `audience` if one is signed and fresh; undefined means call workloadToken. */
  readyWorkloadToken(audience: Workload): string | undefined {
    return this.ready.get(`w|${audience}`, nowSeconds());
  }

  /** A fresh signed assertion for `user` to `audience`, or undefined (then call principalAssertion). */
  readyPrincipalAssertion(audience: Workload, user: UserPrincipal): string | undefined {
    return this.ready.get(principalSlot(audience, user), nowSeconds());
  }

  /** The workload token for calls to `audience`. */
  workloadToken(audience: Workload): Promise<string> {
    return this.cached(`w|${audience}`, WORKLOAD_TOKEN_SECONDS, (jwt) =>
      jwt.setProtectedHeader({ alg: this.signing.alg, typ: WORKLOAD_TYP, kid: this.workload }).setAudience(audience).setSubject(this.workload),
    this.roles.length > 0 ? { roles: [...this.roles] } : {});
  }

  /** A principal assertion for `user`'s call to `audience` (gateway and auth only). */
  principalAssertion(audience: Workload, user: UserPrincipal): Promise<string> {
    if (!this.issuesAssertions) throw new Error(`workload ${this.workload} does not issue principal assertions`);
    const scope = (user.scopes ?? []).join(' ');
    return this.cached(principalSlot(audience, user), PRINCIPAL_ASSERTION_SECONDS, (jwt) =>
      jwt.setProtectedHeader({ alg: this.signing.alg, typ: PRINCIPAL_TYP, kid: this.workload }).setAudience(audience).setSubject(user.userId),
    scope ? { key: user.keyId, scope } : { key: user.keyId });
  }

  private cached(cacheKey: string, lifetime: number, shape: (jwt: SignJWT) => SignJWT, claims: JWTPayload): Promise<string> {
    const now = nowSeconds();
    const hit = this.tokens.get(cacheKey, now);
    if (hit) return hit;
    const token = shape(new SignJWT(claims)).setIssuer(this.workload).setIssuedAt(now).setExpirationTime(now + lifetime).sign(this.signing.key);
    const until = now + Math.floor(lifetime / 2);
    this.tokens.set(cacheKey, token, until);
    token.then(
      (signed) => this.ready.set(cacheKey, signed, until),
      () => this.tokens.set(cacheKey, token, 0),
    );
    return token;
  }
}

/** Checks tokens addressed to `self` against the trust store; a verified token is cached until it expires. */
export class TokenVerifier {
  private readonly workloads = new ExpiringCache<VerifiedWorkload>();
  private readonly assertions = new ExpiringCache<VerifiedAssertion>();

  constructor(
    readonly self: Workload,
    private readonly trust: TrustStore,
  ) {}

  /** A workload token verified before and not yet expired, without waiting; undefined: call workloadToken. */
  verifiedWorkload(token: string): VerifiedWorkload | undefined {
    return this.workloads.get(token, nowSeconds());
  }

  /** An assertion verified before and not yet expired, without waiting; undefined: call principalAssertion. */
  verifiedAssertion(token: string): VerifiedAssertion | undefined {
    return this.assertions.get(token, nowSeconds());
  }

  async workloadToken(token: string): Promise<VerifiedWorkload> {
    const now = nowSeconds();
    const hit = this.workloads.get(token, now);
    if (hit) return hit;
    const { payload, exp } = await this.verify(token, WORKLOAD_TYP, WORKLOAD_TOKEN_SECONDS, () => true);
    const workload = payload.iss as Workload;
    if (payload.sub !== workload) throw new TokenRejected('a workload token names another subject than its issuer');
    const roles = payload.roles ?? [];
    if (!Array.isArray(roles) || !roles.every((r) => (WORKLOAD_ROLES[workload] as readonly unknown[]).includes(r))) {
      throw new TokenRejected(`workload ${workload} claims a role it does not hold`);
    }
    const verified: VerifiedWorkload = { workload, roles: roles as Role[] };
    this.workloads.set(token, verified, exp);
    return verified;
  }

  async principalAssertion(token: string): Promise<VerifiedAssertion> {
    const now = nowSeconds();
    const hit = this.assertions.get(token, now);
    if (hit) return hit;
    const { payload, exp } = await this.verify(token, PRINCIPAL_TYP, PRINCIPAL_ASSERTION_SECONDS, (w) => PRINCIPAL_ISSUERS.includes(w));
    if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload.key !== 'string') {
      throw new TokenRejected('a principal assertion without a user');
    }
    if (payload.scope !== undefined && typeof payload.scope !== 'string') throw new TokenRejected('a principal assertion whose scope is not a string');
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => s !== '') : [];
    const verified: VerifiedAssertion = { userId: payload.sub, keyId: payload.key, scopes, issuer: payload.iss as Workload };
    this.assertions.set(token, verified, exp);
    return verified;
  }

  private async verify(token: string, typ: string, maxLifetime: number, mayIssue: (w: Workload) => boolean): Promise<{ payload: JWTPayload; exp: number }> {
    try {
      const { payload } = await jwtVerify(
        token,
        (header) => {
          const issuer = header.kid;
          if (!isWorkload(issuer) || !mayIssue(issuer)) throw new TokenRejected(`${String(issuer)} may not issue this token`);
          const trusted = this.trust.get(issuer);
          if (!trusted || trusted.alg !== header.alg) throw new TokenRejected(`no trusted ${String(header.alg)} key of ${issuer}`);
          return trusted.key;
        },
        { typ, audience: this.self, clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: ['iss', 'sub', 'aud', 'iat', 'exp'], maxTokenAge: maxLifetime + CLOCK_TOLERANCE_SECONDS },
      );
      const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: string };
      if (payload.iss !== header.kid) throw new TokenRejected('the issuer is not the key that signed');
      const exp = payload.exp!;
      if (exp - payload.iat! > maxLifetime) throw new TokenRejected('the token lives longer than its kind may');
      return { payload, exp };
    } catch (err) {
      if (err instanceof TokenRejected) throw err;
      throw new TokenRejected(err instanceof Error ? err.message : 'unverifiable token');
    }
  }
}
