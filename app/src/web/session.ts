/**
 * Who is signed in, and the seam where the real app's sign-in takes over.
 *
 * Here sessions come from one-time sign-in links (auth's CreateSignInLink → StartSession) and
 * live in auth (GetSession, EndSession); the browser holds only the session token, in an
 * HttpOnly, SameSite=Lax cookie (Secure behind TLS). The real app replaces {@link SessionSource}
 * with its own sign-in and keeps everything else: each page only asks "which user is this?".
 *
 * CSRF: every POST carries a token derived from the session token (HMAC-SHA256 keyed by it), so
 * it is unguessable without the cookie and dies with the session; forms embed it, the server
 * recomputes it. Requests a browser marks as cross-site (Sec-Fetch-Site, Origin) are refused too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MurmurError } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';

/** A signed-in person, as each page sees them. */
export interface SignedIn {
  userId: string;
  /** The session's id (ses_…): what a listen token of the Record page is bound to. Never a secret. */
  sessionId: string;
  sessionToken: string;
  expiresAt: Date;
}

/** Where sessions come from: auth's sign-in stand-in here, the real app's sign-in in production. */
export interface SessionSource {
  /** Redeems a one-time sign-in token; throws not_found for an unknown, used or expired one. */
  start(signInToken: string): Promise<SignedIn>;
  /** The session of a token, or undefined once it is unknown, ended or expired. */
  resolve(sessionToken: string): Promise<SignedIn | undefined>;
  end(sessionToken: string): Promise<void>;
}

/** Sessions held by auth (the stand-in). */
export function authSessions(clients: ServiceClients): SessionSource {
  return {
    async start(signInToken) {
      const { sessionToken, session } = await clients.auth.startSession({ signInToken });
      if (!session?.expiresAt) throw new Error('auth answered StartSession without a session');
      return { userId: session.userId, sessionId: session.id, sessionToken, expiresAt: session.expiresAt };
    },
    async resolve(sessionToken) {
      try {
        const { session } = await clients.auth.getSession({ sessionToken });
        return session?.expiresAt ? { userId: session.userId, sessionId: session.id, sessionToken, expiresAt: session.expiresAt } : undefined;
      } catch (err) {
        if (err instanceof MurmurError && err.code === 'not_found') return undefined;
        throw err;
      }
    },
    async end(sessionToken) {
      await clients.auth.endSession({ sessionToken });
    },
  };
}

/** The cookie's name: `__Host-` (no Domain, Path=/, Secure enforced by browsers) when over TLS. */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-murmur_session' : 'murmur_session';
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** The CSRF token of a session (see the module comment). */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('murmur-app-csrf').digest('base64url');
}

/** Whether a form's token is the session's. */
export function csrfTokenMatches(sessionToken: string, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Whether the browser says this request came from another site: fetch metadata first, then
 * Origin. An Origin of "null" (privacy settings, some redirects) decides nothing either way.
 */
export function isCrossSite(headers: { 'sec-fetch-site'?: string | string[] | undefined; origin?: string | undefined; host?: string | undefined }): boolean {
  const site = headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = headers.origin;
  if (!origin || origin === 'null') return false;
  try {
    return new URL(origin).host !== headers.host;
  } catch {
    return true;
  }
}
