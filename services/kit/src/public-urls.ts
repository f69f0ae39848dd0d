/**
 * The public addresses of Murmur's two HTTP front ends, read from the same settings by every
 * process that needs them: the gateway (the MCP server's resource identifier and its
 * authorization server, docs/oauth.md), the app (sign-in links, the authorization server's
 * issuer, the examples in its pages) and the admin CLI.
 */
import { z } from './config';

export const DEFAULT_APP_PORT = 8081;
export const DEFAULT_API_PORT = 8080;

export const publicUrlsSchema = {
  /** The app's port (its pages, sign-in and OAuth authorization server). */
  APP_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_APP_PORT),
  /** The app's public address (default http://localhost:APP_PORT). https here means Secure cookies. */
  APP_PUBLIC_URL: z.string().url().optional(),
  /** The public API's address (default http://localhost:PORT): REST at /api/v1, the MCP server at /mcp. */
  PUBLIC_API_URL: z.string().url().optional(),
};

const noSlash = (url: string) => url.replace(/\/+$/, '');

/** The app's own address without a trailing slash. */
export function appPublicUrl(cfg: { APP_PUBLIC_URL?: string | undefined; APP_PORT: number }): string {
  return noSlash(cfg.APP_PUBLIC_URL ?? `http://localhost:${cfg.APP_PORT}`);
}

/** The public API's address without a trailing slash. */
export function publicApiUrl(cfg: { PUBLIC_API_URL?: string | undefined; PORT: number }): string {
  return noSlash(cfg.PUBLIC_API_URL ?? `http://localhost:${cfg.PORT}`);
}
