/**
 * Webhook signing secrets at rest (issue 30): sealed with AES-256-GCM under the operator's key,
 * bound to their owner, with the key's id in every value so keys can rotate; the rows written
 * before secrets were sealed are sealed by the service at start (after migration 003, on the
 * real schema: real Postgres when DATABASE_URL is set, PGlite otherwise), and a rotated-out
 * key's rows are sealed again with the new one. Plain http endpoints are refused unless allowed.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_OUTBOUND_POLICY, type Database } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';
import { TRANSCRIPTION_MIGRATIONS_DIR } from '../src/index';
import { newSecretKeyEntry, parseSecretKeys, SecretSealer } from '../src/webhooks/secret-keys';
import { checkEndpointForm, postWebhook } from '../src/webhooks/sender';
import { newSecret } from '../src/webhooks/signature';
import { sealStoredSecrets } from '../src/webhooks/webhooks';

describe('sealed webhook secrets', () => {
  const k1 = newSecretKeyEntry('k1');
  const k2 = newSecretKeyEntry('k2');

  it('round-trips a secret for its owner only; a changed byte or another key fails', () => {
    const sealer = SecretSealer.fromText(k1);
    const secret = newSecret();
    const sealed = sealer.seal(secret, 'usr_a');
    expect(sealed).toMatch(/^v1:k1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(secret.slice('whsec_'.length));
    expect(sealer.seal(secret, 'usr_a')).not.toBe(sealed); // a fresh IV every time
    expect(sealer.open(sealed, 'usr_a')).toBe(secret);
    expect(() => sealer.open(sealed, 'usr_b')).toThrow();
    const [v, id, iv, body] = sealed.split(':') as [string, string, string, string];
    const flipped = Buffer.from(body, 'base64');
    flipped[0]! ^= 1;
    expect(() => sealer.open([v, id, iv, flipped.toString('base64')].join(':'), 'usr_a')).toThrow();
    expect(() => SecretSealer.fromText(newSecretKeyEntry('k1')).open(sealed, 'usr_a')).toThrow();
    expect(() => SecretSealer.fromText(k2).open(sealed, 'usr_a')).toThrow(/key k1, which is not configured/);
  });

  it.each([
    ['', /no key/],
    ['k1', /<key id>:<32 random bytes/],
    ['k 1:abc', /<key id>/],
    [`k1:${Buffer.alloc(16).toString('base64')}`, /exactly 32 bytes/],
    [`${k1},${k1}`, /same id/],
  ])('refuses the key list %j', (raw, why) => {
    expect(() => parseSecretKeys(raw)).toThrow(why);
  });

  it('reads several keys, from a line each or comma-separated; the first seals', () => {
    expect(parseSecretKeys(`${k2}\n${k1}\n`).map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(SecretSealer.fromText(`${k2}, ${k1}`).currentKeyId).toBe('k2');
  });

  describe('on the service schema', () => {
    let db: Database;
    beforeAll(async () => {
      db = await openTestDatabase('transcription', TRANSCRIPTION_MIGRATIONS_DIR);
    });
    afterAll(async () => {
      await db.close();
    });

    it('refuses a plaintext secret now; seals the rows written before migration 003, then again under a new key', async () => {
      await expect(db.query(`INSERT INTO webhook_settings (owner_id, secret) VALUES ('usr_plain', $1)`, [newSecret()])).rejects.toThrow(/webhook_settings_secret_sealed/);
      // The table as it was before 003: plaintext rows (one mid-rotation, one with no secret at all).
      await db.query(`ALTER TABLE webhook_settings DROP CONSTRAINT webhook_settings_secret_sealed, DROP CONSTRAINT webhook_settings_previous_secret_sealed`);
      const a = newSecret();
      const b = newSecret();
      const previous = newSecret();
      await db.query(`INSERT INTO webhook_settings (owner_id, secret) VALUES ('usr_a', $1)`, [a]);
      await db.query(`INSERT INTO webhook_settings (owner_id, secret, previous_secret, previous_until) VALUES ('usr_b', $1, $2, now() + interval '1 hour')`, [b, previous]);
      await db.query(`INSERT INTO webhook_settings (owner_id, default_url) VALUES ('usr_c', 'https://example.com/hook')`);
      await db.query(readFileSync(path.join(TRANSCRIPTION_MIGRATIONS_DIR, '003_webhook_secrets_sealed.sql'), 'utf8'));

      const first = SecretSealer.fromText(k1);
      expect(await sealStoredSecrets(db, first)).toBe(2);
      const rows = async () => db.query<{ owner_id: string; secret: string | null; previous_secret: string | null }>(`SELECT owner_id, secret, previous_secret FROM webhook_settings ORDER BY owner_id`);
      const stored = await rows();
      expect(JSON.stringify(stored)).not.toMatch(/whsec_/);
      for (const plain of [a, b, previous]) expect(JSON.stringify(stored)).not.toContain(plain.slice('whsec_'.length));
      expect(stored.slice(0, 2).map((r) => [r.owner_id, first.open(r.secret!, r.owner_id), r.previous_secret && first.open(r.previous_secret, r.owner_id)])).toEqual([
        ['usr_a', a, null],
        ['usr_b', b, previous],
      ]);
      expect(stored[2]).toMatchObject({ owner_id: 'usr_c', secret: null, previous_secret: null });
      expect(await sealStoredSecrets(db, first)).toBe(0);

      // Rotating the key: the new one first, the old one after it until every row is sealed again.
      expect(await sealStoredSecrets(db, SecretSealer.fromText(`${k2},${k1}`))).toBe(2);
      const onlyNew = SecretSealer.fromText(k2);
      const again = await rows();
      expect(again.slice(0, 2).map((r) => [onlyNew.open(r.secret!, r.owner_id), r.previous_secret && onlyNew.open(r.previous_secret, r.owner_id)])).toEqual([
        [a, null],
        [b, previous],
      ]);
      // A key dropped too early stops the start rather than leave secrets nobody can open.
      await expect(sealStoredSecrets(db, SecretSealer.fromText(newSecretKeyEntry('k3')))).rejects.toThrow(/key k2, which is not configured/);
    });
  });
});

describe('webhook endpoints', () => {
  it('are https only unless the operator allows plain http', async () => {
    expect(checkEndpointForm('https://hooks.example.com/murmur', DEFAULT_OUTBOUND_POLICY)).toBeNull();
    expect(checkEndpointForm('http://hooks.example.com/murmur', DEFAULT_OUTBOUND_POLICY)).toMatch(/must use https/);
    expect(checkEndpointForm('http://hooks.example.com/murmur', DEFAULT_OUTBOUND_POLICY, true)).toBeNull();
    // An http endpoint stored while it was allowed is not called once it no longer is (nothing is sent).
    const outcome = await postWebhook('http://hooks.example.com/murmur', {}, '{}', DEFAULT_OUTBOUND_POLICY, { resolve: async () => [{ address: '93.184.215.14', family: 4 }] });
    expect(outcome).toEqual({ ok: false, status: 0, error: expect.stringMatching(/must use https/) });
  });
});
