/**
 * First start on an empty store: a demo user on the pro plan with seeded content and one API
 * key, printed once with two curl examples. Later starts only say how to mint another key.
 * Every start prints a fresh one-time sign-in link of the demo user to the app's Settings pages.
 */
import { admin, adminIdentity } from '@murmur/app';
import type { IdentityConfig } from '@murmur/kit';
import { closeServiceClients, createServiceClients, type ServiceAddresses } from '@murmur/kit';

const { createUser, createKey, seed, signInLinkFor } = admin;

export const DEMO_EMAIL = 'demo@murmur.local';

export async function firstRun(
  env: ServiceAddresses & IdentityConfig,
  baseUrl: string,
  appUrl: string,
  print: (line: string) => void,
): Promise<void> {
  const clients = createServiceClients(env, { deadlineMs: 30_000, identity: adminIdentity(env) });
  const printSignIn = async () => {
    const { link } = await signInLinkFor(clients, DEMO_EMAIL, appUrl).catch(() => ({ link: '' }));
    if (!link) return;
    print(`Manage keys and see usage in the app (Settings → Developer); this sign-in link works once, for 15 minutes:`);
    print(`  ${link}`);
    print(`  (another: npm run admin -- login --email ${DEMO_EMAIL})`);
  };
  try {
    const { users } = await clients.auth.listUsers({ pageSize: 1, pageToken: '' });
    if (users.length > 0) {
      print('The store already has users. Mint a key for the demo user with:');
      print(`  npm run admin -- keys create --email ${DEMO_EMAIL}`);
      await printSignIn();
      return;
    }
    await createUser(clients, DEMO_EMAIL, 'Demo User', 'pro');
    const seeded = await seed(clients, DEMO_EMAIL, 25);
    const { key } = await createKey(clients, DEMO_EMAIL, '90', 'quick start');
    print(`Created ${DEMO_EMAIL} on the pro plan with ${seeded.recordings} recordings, ${seeded.threads} Thought Threads, ${seeded.folders} folders and ${seeded.knowledgeBases} knowledge bases.`);
    print('Its API key (shown once; keep it):');
    print(`  MURMUR_API_KEY=${key}`);
    print('Try:');
    print(`  curl -s ${baseUrl}/api/v1/me -H "Authorization: Bearer ${key}"`);
    print(`  curl -s "${baseUrl}/api/v1/recordings?limit=5&q=launch" -H "Authorization: Bearer ${key}"`);
    await printSignIn();
  } finally {
    closeServiceClients(clients);
  }
}
