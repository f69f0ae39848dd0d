/**
 * The app's web server settings: where it listens and the address people reach it at (the
 * sign-in links the admin CLI prints point there, and it is the OAuth authorization server's
 * issuer). Shared by the server and the CLI's `login`; the public addresses are the kit's, read
 * the same way by the gateway.
 */
import { outboundConfigSchema, outboundPolicyOf, publicUrlsSchema, z } from '@murmur/kit';
import type { ClientMetadataPolicy } from './oauth/client-metadata';

export { appPublicUrl, DEFAULT_APP_PORT, publicApiUrl } from '@murmur/kit';

export const appWebSchema = {
  ...publicUrlsSchema,
  /** Loopback by default: the app's pages are for the person at this machine unless opened up. */
  APP_HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(1).max(65535).default(8080),
};

/** The prefix of the Client ID Metadata Document fetching rules (MURMUR_CIMD_ALLOW_PRIVATE, …). */
export const CIMD_ENV_PREFIX = 'MURMUR_CIMD';

/**
 * Where the authorization server may fetch Client ID Metadata Documents from (always https): the
 * kit's outbound rules, public addresses on port 443 unless opened up (MURMUR_CIMD_ALLOW_PRIVATE,
 * MURMUR_CIMD_ALLOW_CIDRS, MURMUR_CIMD_PORTS).
 */
export const clientMetadataSchema = outboundConfigSchema(CIMD_ENV_PREFIX);

export function clientMetadataPolicyOf(cfg: Record<string, unknown>): ClientMetadataPolicy {
  return outboundPolicyOf(CIMD_ENV_PREFIX, cfg);
}

/** The link a person opens to sign in with a one-time token. */
export function signInLink(appUrl: string, token: string): string {
  return `${appUrl}/sign-in?token=${encodeURIComponent(token)}`;
}
