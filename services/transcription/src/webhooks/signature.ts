/**
 * Standard Webhooks signatures (standardwebhooks.com): `webhook-signature` is `v1,` + base64 of
 * HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the secret's base64 part
 * (after `whsec_`); several space-separated signatures while a rotated-out secret still signs.
 * Written with node:crypto (a few lines of a published spec), so that the tests' verifier — the
 * `standardwebhooks` package — is an independent implementation checking ours.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: whsec_ + base64 of 32 random bytes (the spec allows 24–64). */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function sign(secret: string, content: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/** The three headers of one delivery attempt, signed by every secret given (newest first). */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: Date, body: string): Record<string, string> {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const content = `${id}.${seconds}.${body}`;
  return {
    'webhook-id': id,
    'webhook-timestamp': seconds,
    'webhook-signature': secrets.map((s) => sign(s, content)).join(' '),
  };
}
