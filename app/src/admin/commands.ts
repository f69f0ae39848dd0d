/**
 * The app's side of key, user and billing management (never public): each command is a thin
 * call of an internal RPC, shared by the admin CLI and the launcher's first-run setup.
 */
import { auth } from '@murmur/proto';
import { hasScope, MurmurError, READ_ONLY_SCOPES } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';
import { seedLibrary } from '../seed/seed-library';
import { signInLink } from '../web/config';

export const EXPIRY: Record<string, auth.KeyExpiry> = {
  '30': auth.KeyExpiry.KEY_EXPIRY_30_DAYS,
  '90': auth.KeyExpiry.KEY_EXPIRY_90_DAYS,
  '365': auth.KeyExpiry.KEY_EXPIRY_365_DAYS,
  never: auth.KeyExpiry.KEY_EXPIRY_NEVER,
};

export async function userByEmail(clients: ServiceClients, email: string): Promise<auth.User> {
  const { user } = await clients.auth.getUser({ lookup: { $case: 'email', value: email } });
  if (!user) throw new MurmurError('not_found', `No user with email ${email}.`);
  return user;
}

export async function createUser(clients: ServiceClients, email: string, name: string, plan: string | undefined): Promise<auth.User> {
  const { user } = await clients.auth.createUser({ email, name });
  if (!user) throw new Error('auth returned no user');
  if (plan) await clients.billing.changePlan({ userId: user.id, planId: plan });
  else await clients.billing.getUsage({ userId: user.id });
  return user;
}

/**
 * The scopes of `--scopes` ("read", or "read,ai"; spaces work too) or of `--read-only`; none of
 * either is full access. Auth judges the set (every key reads).
 */
export function keyScopesOf(scopes: string | undefined, readOnly: boolean): string[] {
  const listed = (scopes ?? '').split(/[\s,]+/).filter((s) => s !== '');
  if (readOnly && listed.length > 0 && listed.join(' ') !== READ_ONLY_SCOPES.join(' ')) {
    throw new MurmurError('invalid_request', '--read-only and --scopes say different things: give one of them.', { param: 'scopes' });
  }
  return readOnly ? [...READ_ONLY_SCOPES] : listed;
}

/** How a key's scopes read in a list: "full access" or "read-only". */
export function keyAccessOf(scopes: readonly string[]): string {
  return scopes.length === 0 || hasScope(scopes, 'ai') ? 'full access' : 'read-only';
}

export async function createKey(clients: ServiceClients, email: string, expires: string, name = 'default', scopes: string[] = []): Promise<auth.CreateApiKeyResponse> {
  const expiry = EXPIRY[expires];
  if (expiry === undefined) throw new MurmurError('invalid_request', '--expires must be 30, 90, 365 or never.', { param: 'expires' });
  const user = await userByEmail(clients, email);
  return clients.auth.createApiKey({ userId: user.id, name, expiry, scopes });
}

export async function listKeys(clients: ServiceClients, email: string): Promise<auth.ApiKey[]> {
  const user = await userByEmail(clients, email);
  return (await clients.auth.listApiKeys({ userId: user.id })).apiKeys;
}

export async function revokeKey(clients: ServiceClients, keyId: string): Promise<auth.ApiKey | undefined> {
  return (await clients.auth.revokeApiKey({ keyId, userId: '' })).apiKey;
}

export async function grantCredits(clients: ServiceClients, email: string, credits: number) {
  const user = await userByEmail(clients, email);
  return (await clients.billing.grantPrepaidCredits({ userId: user.id, credits, note: 'admin grant' })).usage;
}

export async function setCap(clients: ServiceClients, email: string, cents: number) {
  const user = await userByEmail(clients, email);
  return (await clients.billing.setSpendingCap({ userId: user.id, capCents: cents })).usage;
}

export async function setCredits(clients: ServiceClients, email: string, monthly: number | undefined, prepaid: number | undefined) {
  if (monthly === undefined && prepaid === undefined) {
    throw new MurmurError('invalid_request', 'Give --monthly N, --prepaid N or both.', { param: 'monthly' });
  }
  const user = await userByEmail(clients, email);
  return (await clients.billing.adjustCredits({ userId: user.id, monthlyCredits: monthly, prepaidCredits: prepaid, note: 'support adjustment (admin CLI)' })).usage;
}

export async function usageOf(clients: ServiceClients, email: string) {
  const user = await userByEmail(clients, email);
  return (await clients.billing.getUsage({ userId: user.id })).usage;
}

export async function seed(clients: ServiceClients, email: string, recordings: number) {
  const user = await userByEmail(clients, email);
  return seedLibrary(clients.library, user.id, { recordings });
}

/** A new webhook signing secret for the user (shown once); the previous one signs for 24 h more. */
export async function rotateWebhookSecret(clients: ServiceClients, email: string) {
  const user = await userByEmail(clients, email);
  return clients.transcription.rotateWebhookSecret({ userId: user.id });
}

/** Sets (or with "" clears) the user's default webhook endpoint. */
export async function setWebhookEndpoint(clients: ServiceClients, email: string, url: string) {
  const user = await userByEmail(clients, email);
  return (await clients.transcription.setWebhookEndpoint({ userId: user.id, url })).settings;
}

export async function webhookSettings(clients: ServiceClients, email: string) {
  const user = await userByEmail(clients, email);
  return (await clients.transcription.getWebhookSettings({ userId: user.id })).settings;
}

/** A one-time sign-in link to the app's pages for the user (15 minutes, single use). */
export async function signInLinkFor(clients: ServiceClients, email: string, appUrl: string): Promise<{ link: string; expiresAt: Date | undefined }> {
  const user = await userByEmail(clients, email);
  const { token, expiresAt } = await clients.auth.createSignInLink({ userId: user.id });
  return { link: signInLink(appUrl, token), expiresAt };
}
