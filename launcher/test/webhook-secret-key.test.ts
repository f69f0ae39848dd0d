/**
 * `npm start` makes the key that seals webhook signing secrets once, private to its user, in a
 * form the transcription service reads, and keeps it across starts; an operator's own wins.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSecretKeys } from '@murmur/transcription';
import { webhookSecretKeyEnv } from '../src/webhook-secret-key';

describe('the webhook secret key of npm start', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'murmur-launcher-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is made once under the data folder (0600), read by the service, and kept', () => {
    const data = path.join(dir, 'data');
    const first = webhookSecretKeyEnv(data, {});
    const file = first.env.MURMUR_WEBHOOK_SECRET_KEY_FILE!;
    expect(first.made).toBe(file);
    expect(path.dirname(file)).toBe(data);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(parseSecretKeys(text)).toHaveLength(1);
    const again = webhookSecretKeyEnv(data, {});
    expect(again).toEqual({ env: { MURMUR_WEBHOOK_SECRET_KEY_FILE: file }, made: null });
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('leaves an operator’s key alone', () => {
    expect(webhookSecretKeyEnv(path.join(dir, 'other'), { MURMUR_WEBHOOK_SECRET_KEY: 'k1:x' })).toEqual({ env: {}, made: null });
    expect(webhookSecretKeyEnv(path.join(dir, 'other'), { MURMUR_WEBHOOK_SECRET_KEY_FILE: '/run/secrets/key' })).toEqual({ env: {}, made: null });
  });
});
