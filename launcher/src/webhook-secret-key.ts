/**
 * The key sealing webhook signing secrets at rest (the transcription service's
 * MURMUR_WEBHOOK_SECRET_KEY_FILE; format `<key id>:<32 random bytes in base64>`, see
 * services/transcription/src/webhooks/secret-keys.ts), made once for `npm start` and kept in the
 * data folder like the workload keys (0600). Losing it loses the owners' signing secrets (they
 * make new ones in Settings → Developer), not their data. An operator's own MURMUR_WEBHOOK_SECRET_KEY
 * or _FILE wins.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export const WEBHOOK_SECRET_KEY_FILE = 'webhook-secret.key';

/** The key file's variables for the children (made when missing), or none when the operator set one. */
export function webhookSecretKeyEnv(dataDir: string, env: NodeJS.ProcessEnv = process.env): { env: Record<string, string>; made: string | null } {
  if (env.MURMUR_WEBHOOK_SECRET_KEY || env.MURMUR_WEBHOOK_SECRET_KEY_FILE) return { env: {}, made: null };
  const file = path.resolve(dataDir, WEBHOOK_SECRET_KEY_FILE);
  let made: string | null = null;
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `local-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    made = file;
  }
  chmodSync(file, 0o600);
  return { env: { MURMUR_WEBHOOK_SECRET_KEY_FILE: file }, made };
}
