/**
 * Webhook signing secrets at rest. Standard Webhooks signs with HMAC, so the sender needs the
 * raw secret back: it cannot be hashed like an API key. It is sealed instead, with AES-256-GCM
 * (node:crypto) under an operator's key that never enters the database:
 *
 *   stored value  `v1:<key id>:<12-byte IV, base64>:<ciphertext + 16-byte tag, base64>`
 *   associated    the owner's id, so a sealed secret copied onto another user's row does not open.
 *
 * The keys (MURMUR_WEBHOOK_SECRET_KEY, or a file named by MURMUR_WEBHOOK_SECRET_KEY_FILE) are
 * `<key id>:<32 random bytes, base64>`, several separated by commas or new lines: the first
 * seals, every one opens. Rotating the key is putting a new one first and keeping the old one
 * after it until every row has been sealed again ({@link sealStoredSecrets} does that at start).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const KEY_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** One key: its id (written into every value it seals) and its 32 bytes. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** What is wrong with a key list, for the start-up line; null when it is good. */
export function secretKeysProblem(raw: string): string | null {
  try {
    parseSecretKeys(raw);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Parses `<id>:<base64 of 32 bytes>` entries separated by commas or white space. */
export function parseSecretKeys(raw: string): SecretKey[] {
  const entries = raw.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) throw new Error('no key: expected <key id>:<32 random bytes in base64>');
  const keys = entries.map((entry, i) => {
    const at = entry.indexOf(':');
    const id = at < 0 ? '' : entry.slice(0, at);
    const encoded = at < 0 ? '' : entry.slice(at + 1);
    if (!KEY_ID.test(id)) throw new Error(`key ${i + 1}: expected <key id>:<32 random bytes in base64>, the id of letters, digits, '.', '_' or '-'`);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
      throw new Error(`key ${id}: must be exactly ${KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
    }
    return { id, key };
  });
  const ids = new Set(keys.map((k) => k.id));
  if (ids.size !== keys.length) throw new Error('two keys have the same id');
  return keys;
}

/** A new key entry (`<id>:<base64>`), for set-up tools and tests. */
export function newSecretKeyEntry(id: string): string {
  if (!KEY_ID.test(id)) throw new Error(`bad key id ${id}`);
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

/** Seals and opens owners' webhook secrets. */
export class SecretSealer {
  private readonly byId: Map<string, Buffer>;
  private readonly current: SecretKey;

  constructor(keys: readonly SecretKey[]) {
    if (!keys[0]) throw new Error('SecretSealer needs at least one key');
    this.current = keys[0];
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  static fromText(raw: string): SecretSealer {
    return new SecretSealer(parseSecretKeys(raw));
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  seal(secret: string, ownerId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(ownerId, 'utf8'));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}:${this.current.id}:${iv.toString('base64')}:${body.toString('base64')}`;
  }

  /** The secret of a sealed value; throws when it is not one, its key is unknown, or it was altered. */
  open(stored: string, ownerId: string): string {
    const parts = stored.split(':');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new Error('not a sealed webhook secret');
    const [, id, iv, body] = parts as [string, string, string, string];
    const key = this.byId.get(id);
    if (!key) throw new Error(`webhook secret sealed with key ${id}, which is not configured (MURMUR_WEBHOOK_SECRET_KEY)`);
    const raw = Buffer.from(body, 'base64');
    if (raw.length <= TAG_BYTES) throw new Error('sealed webhook secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(ownerId, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(0, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /** Whether `stored` is sealed with the current key (else it is plaintext or under an older key). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${VERSION}:${this.current.id}:`);
  }

  /** Whether `stored` is sealed at all (a value written before sealing is `whsec_…`). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(`${VERSION}:`);
  }
}
