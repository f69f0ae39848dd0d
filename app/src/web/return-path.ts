/**
 * Where to go after signing in, when sign-in interrupted something: an MCP client's
 * authorization request that found no session. The path is kept in a short-lived cookie
 * (HttpOnly, SameSite=Lax, 10 minutes; `__Host-` and Secure over TLS) and used once by the
 * sign-in post. Only a path on this origin is ever kept or followed, so the cookie cannot turn
 * sign-in into a redirect to another site.
 */
import type { Request, Response } from 'express';
import { cookieValue } from './session';

/** How long the path is kept. */
export const RETURN_PATH_TTL_MS = 10 * 60_000;
/** Longer paths are not kept (cookies hold about 4 KB); the person then starts over from the client. */
const MAX_RETURN_PATH_CHARS = 3_000;

export function returnPathCookieName(secure: boolean): string {
  return secure ? '__Host-murmur_return' : 'murmur_return';
}

/** Whether `path` stays on this origin: one leading slash, then no backslash, whitespace or control character. */
export function isSameOriginPath(path: string): boolean {
  return path.length <= MAX_RETURN_PATH_CHARS && /^\/(?![/\\])[^\\\s\u0000-\u001f\u007f]*$/.test(path);
}

/** The cookie's path, if it holds a same-origin one (a value that does not decode holds none). */
function keptPath(req: Request, secure: boolean): string | undefined {
  try {
    const path = cookieValue(req.headers.cookie, returnPathCookieName(secure));
    return path !== undefined && isSameOriginPath(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `path` for after sign-in (ignored unless it is a same-origin path). */
export function rememberReturnPath(res: Response, path: string, secure: boolean): void {
  if (!isSameOriginPath(path)) return;
  res.cookie(returnPathCookieName(secure), path, { httpOnly: true, secure, sameSite: 'lax', path: '/', maxAge: RETURN_PATH_TTL_MS });
}

/** The kept path, forgotten as it is read; undefined when there is none or it is not a same-origin path. */
export function takeReturnPath(req: Request, res: Response, secure: boolean): string | undefined {
  const path = keptPath(req, secure);
  if (req.headers.cookie?.includes(`${returnPathCookieName(secure)}=`)) res.clearCookie(returnPathCookieName(secure), { httpOnly: true, secure, sameSite: 'lax', path: '/' });
  return path;
}

/** Whether a path is kept (the sign-in page then says where Continue leads). */
export function hasReturnPath(req: Request, secure: boolean): boolean {
  return keptPath(req, secure) !== undefined;
}
