/**
 * First start on an empty store: a demo user on the pro plan with seeded content and one API
 * key, printed once with two curl examples. Later starts only say how to mint another key.
 * Every start prints a fresh one-time sign-in link of the demo user to the app's Settings pages.
 *
 * A first start is finished only once its key is printed (main.ts prints "Murmur is up" with
 * it): until then the data folder keeps its mark (first-start-mark.ts), and the next start takes
 * it up again — it finds or makes the demo user, completes the seed (seedLibrary writes only what
 * is missing), revokes the key an interrupted start made but never showed, and mints a new one.
 */
import { admin, adminIdentity, seedLibrary } from '@murmur/app';
import { MurmurError } from '@murmur/contract';
import { closeServiceClients, createServiceClients, type IdentityConfig, type ServiceAddresses, type ServiceClients } from '@murmur/kit';
import type { auth } from '@murmur/proto';
import type { FirstStartMark } from './first-start-mark';

const { createUser, createKey, listKeys, revokeKey, signInLinkFor, userByEmail } = admin;

export const DEMO_EMAIL = 'demo@murmur.local';
/** How many recordings the demo library holds. */
export const DEMO_RECORDINGS = 25;
/** The name of the key a first start mints: one an interrupted start left (never shown) is revoked. */
export const QUICK_START_KEY_NAME = 'quick start';

/** What to print after "Murmur is up"; `printed()` once it is printed (it finishes a first start). */
export interface Welcome {
  lines: string[];
  printed(): void;
}

export async function firstRun(env: ServiceAddresses & IdentityConfig, baseUrl: string, appUrl: string, mark: FirstStartMark): Promise<Welcome> {
  const clients = createServiceClients(env, { deadlineMs: 30_000, identity: adminIdentity(env) });
  try {
    const resumed = mark.pending();
    if (!resumed) {
      const { users } = await clients.auth.listUsers({ pageSize: 1, pageToken: '' });
      if (users.length > 0) {
        const lines = ['The store already has users. Mint a key for the demo user with:', `  npm run admin -- keys create --email ${DEMO_EMAIL}`];
        return { lines: [...lines, ...(await signInLines(clients, appUrl))], printed: () => undefined };
      }
      mark.begin();
    }
    const user = await demoUser(clients);
    // The plan's clock is the user's creation, so a resumed start plans the very same library.
    if (!user.createdAt) throw new Error('auth returned the demo user without its creation time');
    const seeded = await seedLibrary(clients.library, user.id, { recordings: DEMO_RECORDINGS, now: user.createdAt });
    for (const k of await listKeys(clients, DEMO_EMAIL)) {
      // Never shown: an interrupted start made it.
      if (k.name === QUICK_START_KEY_NAME && !k.revokedAt) await revokeKey(clients, k.id);
    }
    const { key } = await createKey(clients, DEMO_EMAIL, '90', QUICK_START_KEY_NAME);
    const what = `on the pro plan with ${seeded.recordings} recordings, ${seeded.threads} Thought Threads, ${seeded.folders} folders and ${seeded.knowledgeBases} knowledge bases`;
    const lines = [
      resumed ? `Finished ${DEMO_EMAIL}, which an interrupted first start began: ${what}.` : `Created ${DEMO_EMAIL} ${what}.`,
      'Its API key (shown once; keep it):',
      `  MURMUR_API_KEY=${key}`,
      'Try:',
      `  curl -s ${baseUrl}/api/v1/me -H "Authorization: Bearer ${key}"`,
      `  curl -s "${baseUrl}/api/v1/recordings?limit=5&q=launch" -H "Authorization: Bearer ${key}"`,
      ...(await signInLines(clients, appUrl)),
    ];
    return { lines, printed: () => mark.finish() };
  } finally {
    closeServiceClients(clients);
  }
}

/** The demo user on the pro plan, made now or by an interrupted first start. */
async function demoUser(clients: ServiceClients): Promise<auth.User> {
  const found = await userByEmail(clients, DEMO_EMAIL).catch((err: unknown) => {
    if (err instanceof MurmurError && err.code === 'not_found') return undefined;
    throw err;
  });
  if (!found) return createUser(clients, DEMO_EMAIL, 'Demo User', 'pro');
  // An interrupted start may have stopped between the user and its plan; the same plan again changes nothing.
  await clients.billing.changePlan({ userId: found.id, planId: 'pro' });
  return found;
}

async function signInLines(clients: ServiceClients, appUrl: string): Promise<string[]> {
  const { link } = await signInLinkFor(clients, DEMO_EMAIL, appUrl).catch(() => ({ link: '' }));
  if (!link) return [];
  return [
    'Manage keys and see usage in the app (Settings → Developer); this sign-in link works once, for 15 minutes:',
    `  ${link}`,
    `  (another: npm run admin -- login --email ${DEMO_EMAIL})`,
  ];
}
