/**
 * The admin CLI as a user runs it: the compiled program (built by `tsc -b`, the first step of
 * `npm test`) against real services, checking its output and effects.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { MAX_ACTIVE_API_KEYS } from '@murmur/contract';
import { testIdentityDir, testIdentityStore, testKeyPems } from '@murmur/kit/testing';
import { get, startSystem, type TestSystem } from '../../gateway/test/support/system';

const run = promisify(execFile);
const CLI = path.resolve(__dirname, '..', 'dist', 'admin', 'main.js');

describe('admin CLI', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => {
    await sys.stop();
  });

  const adminWith = async (identityDir: string, ...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...sys.addresses, MURMUR_IDENTITY_DIR: identityDir } });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  /** The CLI as an operator runs it beside `npm start`: with the app's workload key (the admin role) from its key store. */
  const admin = (...args: string[]) => adminWith(testIdentityStore(), ...args);

  it("refuses to run without the app's workload key, naming where it looked", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'murmur-no-identity-'));
    const res = await adminWith(empty, 'users', 'create', '--email', 'nokey@example.com');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(`no workload key of app at ${path.join(empty, 'app.key')}`);
    expect((await admin('keys', 'list', '--email', 'nokey@example.com')).code).not.toBe(0); // the user was never made
  });

  it('takes the app key as the chart mounts it, and from a key store of an earlier version, which it moves into its folders', async () => {
    expect((await admin('users', 'create', '--email', 'layouts@example.com')).code).toBe(0);
    const chart = await adminWith(testIdentityDir('app'), 'keys', 'list', '--email', 'layouts@example.com');
    expect(chart).toMatchObject({ code: 0, stderr: '' });
    const earlier = mkdtempSync(path.join(tmpdir(), 'murmur-earlier-identity-'));
    for (const [w, p] of testKeyPems()) {
      writeFileSync(path.join(earlier, `${w}.key`), p.privatePem, { mode: 0o600 });
      writeFileSync(path.join(earlier, `${w}.pub`), p.publicPem);
    }
    expect(await adminWith(earlier, 'keys', 'list', '--email', 'layouts@example.com')).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(earlier).sort()).toEqual(['admin', 'private', 'public']);
  });

  it('creates a user and a key, prints the key alone on the last line, and the key works', async () => {
    expect((await admin('users', 'create', '--email', 'cli@example.com', '--name', 'Cli', '--plan', 'business')).code).toBe(0);
    const created = await admin('keys', 'create', '--email', 'cli@example.com', '--expires', '30');
    expect(created.code).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const key = lines[lines.length - 1]!;
    expect(key).toMatch(/^svc_[0-9a-f]{64}$/);
    expect(created.stdout.split(key).length).toBe(2); // shown exactly once
    const me = await get(sys.baseUrl, '/api/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.body.plan.id).toBe('business');
    expect(me.body.usage.credits.monthly_remaining).toBe(10_000);

    const listed = await admin('keys', 'list', '--email', 'cli@example.com');
    expect(listed.stdout).toContain(me.body.api_key.id);
    expect(listed.stdout).toContain('active');
    expect(listed.stdout).not.toContain(key);

    expect((await admin('credits', 'grant', '--email', 'cli@example.com', '--prepaid', '250')).stdout).toContain('250');
    expect((await admin('cap', 'set', '--email', 'cli@example.com', '--cents', '900')).stdout).toContain('900');
    const usage = await get(sys.baseUrl, '/api/v1/usage', key);
    expect(usage.body.credits.prepaid_remaining).toBe(250);
    expect(usage.body.spending.cap_cents).toBe(900);

    const set = await admin('credits', 'set', '--email', 'cli@example.com', '--monthly', '7', '--prepaid', '3');
    expect(set.stdout).toContain('monthly credits now 7, prepaid credits now 3');
    expect((await get(sys.baseUrl, '/api/v1/usage', key)).body.credits).toMatchObject({ monthly_remaining: 7, prepaid_remaining: 3 });
    const report = await admin('usage', '--email', 'cli@example.com');
    expect(report.stdout).toMatch(/monthly credits\s+7 left of 10000/);
    expect(report.stdout).toMatch(/spending\s+0 of 900 cents/);
    const ledger = await sys.admin.billing.listLedgerEntries({ userId: me.body.id, pageSize: 5, pageToken: '' });
    expect(ledger.entries[0]).toMatchObject({ kind: 'adjust', monthlyDelta: 7 - 10_000, prepaidDelta: 3 - 250 });

    expect((await admin('seed', '--email', 'cli@example.com', '--recordings', '4')).stdout).toContain('seeded 4 recordings');
    expect((await get(sys.baseUrl, '/api/v1/recordings', key)).body.data).toHaveLength(4);

    expect((await admin('keys', 'revoke', me.body.api_key.id)).code).toBe(0);
    expect((await get(sys.baseUrl, '/api/v1/me', key)).status).toBe(401);
  });

  it('creates a read-only key with --read-only (or --scopes read), lists it as read-only, and the key is refused AI calls', async () => {
    expect((await admin('users', 'create', '--email', 'cli-ro@example.com')).code).toBe(0);
    for (const flags of [['--read-only'], ['--scopes', 'read']]) {
      const created = await admin('keys', 'create', '--email', 'cli-ro@example.com', '--name', `ro ${flags[0]}`, ...flags);
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/^created read-only key key_\S+ \(svc_\S+, scopes read\)/);
      const key = created.stdout.trimEnd().split('\n').pop()!;
      expect((await get(sys.baseUrl, '/api/v1/me', key)).status).toBe(200);
      const convert = await fetch(`${sys.baseUrl}/api/v1/convert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transcript: 'We agreed to ship in March.', kind: 'summary' }),
      });
      expect([convert.status, ((await convert.json()) as { error: { code: string } }).error.code]).toEqual([403, 'insufficient_scope']);
    }
    const full = await admin('keys', 'create', '--email', 'cli-ro@example.com', '--name', 'full');
    expect(full.stdout).toMatch(/^created full access key .*scopes read ai\)/);
    const listed = (await admin('keys', 'list', '--email', 'cli-ro@example.com')).stdout.trimEnd().split('\n');
    // Name → access (keys made in the same millisecond list in either order).
    expect(Object.fromEntries(listed.map((line) => [line.split('\t')[2], line.split('\t')[4]]))).toEqual({
      full: 'full access',
      'ro --read-only': 'read-only',
      'ro --scopes': 'read-only',
    });
  });

  it(`refuses a key past the ${MAX_ACTIVE_API_KEYS} active keys a user may hold, saying to revoke one`, async () => {
    const { user } = await sys.admin.auth.createUser({ email: 'cli-full@example.com', name: '' });
    for (let i = 0; i < MAX_ACTIVE_API_KEYS; i++) await sys.admin.auth.createApiKey({ userId: user!.id, name: `k${i}`, expiry: 0, scopes: [] });
    const res = await admin('keys', 'create', '--email', 'cli-full@example.com');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: api_key_limit_reached: You already have 50 active API keys.*keys revoke KEY_ID/);
  });

  it("prints a one-time sign-in link to the app's pages at APP_PUBLIC_URL, which opens a session once", async () => {
    await admin('users', 'create', '--email', 'cli-login@example.com');
    const res = await run(process.execPath, [CLI, 'login', '--email', 'cli-login@example.com'], {
      env: { ...process.env, ...sys.addresses, MURMUR_IDENTITY_DIR: testIdentityStore(), APP_PUBLIC_URL: 'https://app.example.com/' },
    });
    const link = res.stdout.trimEnd().split('\n').pop()!;
    expect(link).toMatch(/^https:\/\/app\.example\.com\/sign-in\?token=sit_[A-Za-z0-9_-]{43}$/);
    const signInToken = new URL(link).searchParams.get('token')!;
    const { session } = await sys.admin.auth.startSession({ signInToken });
    const { user } = await sys.admin.auth.getUser({ lookup: { $case: 'email', value: 'cli-login@example.com' } });
    expect(session?.userId).toBe(user!.id);
    await expect(sys.admin.auth.startSession({ signInToken })).rejects.toMatchObject({ code: 'not_found' });
  });

  it.each([
    [['keys', 'create', '--email', 'nobody@example.com'], 'not_found'],
    [['keys', 'create', '--email', 'cli@example.com', '--expires', '7'], '--expires'],
    [['credits', 'grant', '--email', 'cli@example.com', '--prepaid', 'lots'], '--prepaid'],
    [['users', 'create'], '--email'],
    [['frobnicate'], 'Unknown command'],
    [['login'], '--email'],
    [['login', '--email', 'nobody@example.com'], 'not_found'],
    [['credits', 'set', '--email', 'cli@example.com'], '--monthly'],
    [['keys', 'create', '--bogus'], 'Unknown option'],
    [['keys', 'create', '--email', 'cli@example.com', '--scopes', 'ai'], 'invalid_request: scopes must be'],
    [['keys', 'create', '--email', 'cli@example.com', '--read-only', '--scopes', 'read,ai'], '--read-only and --scopes'],
  ])('fails cleanly for %j', async (args, message) => {
    const res = await admin(...args);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(message);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
