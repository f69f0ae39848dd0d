/**
 * The app's web server settings: where it listens and the address people reach it at (the
 * sign-in links the admin CLI prints point there). Shared by the server and the CLI's `login`.
 */
import { z } from '@murmur/kit';

export const DEFAULT_APP_PORT = 8081;

export const appWebSchema = {
  APP_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_APP_PORT),
  /** Loopback by default: the app's pages are for the person at this machine unless opened up. */
  APP_HOST: z.string().default('127.0.0.1'),
  /** The app's public address, for sign-in links (default http://localhost:APP_PORT). https here means Secure cookies. */
  APP_PUBLIC_URL: z.string().url().optional(),
  /** The public API's address, shown in the pages' examples (default http://localhost:PORT). */
  PUBLIC_API_URL: z.string().url().optional(),
  PORT: z.coerce.number().int().min(1).max(65535).default(8080),
};

/** The app's own address without a trailing slash. */
export function appPublicUrl(cfg: { APP_PUBLIC_URL?: string | undefined; APP_PORT: number }): string {
  return (cfg.APP_PUBLIC_URL ?? `http://localhost:${cfg.APP_PORT}`).replace(/\/+$/, '');
}

/** The link a person opens to sign in with a one-time token. */
export function signInLink(appUrl: string, token: string): string {
  return `${appUrl}/sign-in?token=${encodeURIComponent(token)}`;
}
