/**
 * Issue #15: Settings → Developer and Usage in real headless Chromium over the whole system:
 * sign in with a one-time link, create a key that is shown once, call the public API with it,
 * revoke it in the page and see the next call refused; the list's hint, last use and status;
 * the usage chart after conversions; CSRF-less, cross-site and foreign-key posts refused; used
 * and expired sign-in links refused; sign-out; security headers; a phone-sized screen.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { MAX_ACTIVE_API_KEYS } from '@murmur/contract';
import { get, startSystem, type TestSystem } from '../../gateway/test/support/system';
import { signInLink } from '../src/web/config';
import { cspViolations, screenshot, signInAs, startApp, type TestApp } from './support/app-browser';

jest.setTimeout(180_000);

type Json = Record<string, any>;

const TRANSCRIPT =
  'Team sync. Dana will send the revised budget to finance by Friday. Leo owns the launch checklist and reviews it with support on Tuesday. ' +
  'We agreed to move the customer webinar to March 12 and to cut the beta invite list to fifty accounts.';

describe('the app: Settings → Developer and Usage in Chromium', () => {
  let sys: TestSystem;
  let app: TestApp;

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    app = await startApp(sys);
  });
  afterAll(async () => {
    await app?.stop();
    await sys?.stop();
  });

  async function linkFor(userId: string): Promise<string> {
    const { token } = await sys.admin.auth.createSignInLink({ userId });
    return signInLink(app.url, token);
  }

  /** A new browser context signed in as the user through the sign-in page. */
  const signedIn = (userId: string, viewport?: { width: number; height: number }) => signInAs(sys, app, userId, viewport);

  const me = (key: string) => get(sys.baseUrl, '/api/v1/me', key);

  it('signs in with a link, creates a 30-day key shown once, and revoking it in the page makes the next call 401', async () => {
    const { user } = await sys.newUser('page-keys@example.com');
    const { page, context, csp } = await signedIn(user.id);
    expect(await page.locator('h1').textContent()).toBe('Developer');
    expect(await page.locator('.who').textContent()).toBe('page-keys@example.com');

    await page.getByLabel('Name').fill('CI pipeline');
    await page.getByLabel('Expiration').selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('#new-key').inputValue();
    expect(key).toMatch(/^svc_[0-9a-f]{64}$/);
    expect(page.url()).not.toContain(key);
    await screenshot(page, 'developer-key-created');

    const row = page.locator('tr', { hasText: 'CI pipeline' });
    const expires = new Date((await row.locator('td[data-label="Expires"] time').getAttribute('datetime'))!);
    expect(Math.abs(expires.getTime() - (Date.now() + 30 * 86_400_000))).toBeLessThan(120_000);
    expect(await row.locator('.last-used').textContent()).toBe('Never');

    expect((await me(key)).status).toBe(200);

    // Dismissed: the key is nowhere in the page any more; the list shows its hint, use and status.
    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL(`${app.url}/settings/developer`);
    expect(await page.content()).not.toContain(key);
    const hint = `svc_${key.slice(4, 8)}…${key.slice(-4)}`;
    for (let i = 0; ; i++) {
      if ((await row.locator('.last-used').textContent()) === 'just now') break;
      if (i > 50) throw new Error(`last used never shown: ${await row.locator('.last-used').textContent()}`);
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    expect(await row.locator('code').textContent()).toBe(hint);
    expect(await row.locator('.status').textContent()).toBe('Active');

    await row.getByRole('link', { name: 'Revoke CI pipeline' }).click();
    expect(await page.locator('h1').textContent()).toBe('Revoke “CI pipeline”?');
    await screenshot(page, 'developer-revoke-confirm');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForURL(/notice=key-revoked/);
    expect(await page.getByRole('status').textContent()).toMatch(/revoked/);
    expect(await row.locator('.status').textContent()).toMatch(/^Revoked /);
    expect(await row.getByRole('link', { name: /Revoke/ }).count()).toBe(0);

    const after = await me(key);
    expect([after.status, after.body.error.code]).toEqual([401, 'invalid_api_key']);
    expect(csp).toEqual([]);
    // The app logged the requests (method, path, status), never the key or a sign-in token.
    expect(app.logLines.some((l) => l.includes('/settings/developer/keys'))).toBe(true);
    expect(app.logLines.filter((l) => l.includes(key) || l.includes(key.slice(4, 40)) || /sit_|sst_/.test(l))).toEqual([]);
    await context.close();
  });

  it('creates a read-only key in the page: listed as read-only, it reads, and an AI call with it is 403 insufficient_scope with nothing charged', async () => {
    const { user } = await sys.newUser('page-read-only@example.com');
    const { page, context, csp } = await signedIn(user.id);
    await page.getByLabel('Name').fill('Dashboard');
    await page.getByLabel('Access').selectOption('read');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('#new-key').inputValue();
    expect(key).toMatch(/^svc_[0-9a-f]{64}$/);
    expect(await page.locator('#created-access').textContent()).toMatch(/^Access: Read-only\. .*insufficient_scope/);
    await screenshot(page, 'developer-read-only-key-created');
    const row = page.locator('tr', { hasText: 'Dashboard' });
    expect(await row.locator('.access').textContent()).toBe('Read-only');
    expect(await page.locator('tr', { hasText: 'test' }).locator('.access').textContent()).toBe('Full access');
    expect((await sys.admin.auth.listApiKeys({ userId: user.id })).apiKeys.find((k) => k.name === 'Dashboard')?.scopes).toEqual(['read']);

    expect((await me(key)).status).toBe(200);
    const before = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
    const refused = await fetch(`${sys.baseUrl}/api/v1/convert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transcript: TRANSCRIPT, kind: 'summary' }),
    });
    const body = (await refused.json()) as Json;
    expect([refused.status, body.error.code]).toEqual([403, 'insufficient_scope']);
    expect(body.error.message).toContain('read-only');
    const after = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
    expect([after.credits, after.rate_limit.remaining]).toEqual([before.credits, before.rate_limit.remaining]);
    expect(csp).toEqual([]);
    await context.close();
  });

  it(`says so in the form when the user already holds ${MAX_ACTIVE_API_KEYS} active keys, and creates nothing`, async () => {
    const { user } = await sys.newUser('page-full@example.com');
    for (let i = 1; i < MAX_ACTIVE_API_KEYS; i++) await sys.admin.auth.createApiKey({ userId: user.id, name: `key ${i}`, expiry: 0, scopes: [] });
    const { page, context } = await signedIn(user.id);
    await page.getByLabel('Name').fill('One too many');
    const answer = page.waitForResponse((r) => r.url().endsWith('/settings/developer/keys'));
    await page.getByRole('button', { name: 'Create key' }).click();
    expect((await answer).status()).toBe(409);
    expect(await page.getByRole('alert').textContent()).toMatch(/already have 50 active API keys.*Revoke a key/);
    expect(await page.locator('#new-key').count()).toBe(0);
    expect((await sys.admin.auth.listApiKeys({ userId: user.id })).apiKeys).toHaveLength(MAX_ACTIVE_API_KEYS);
    await context.close();
  });

  it('refuses a key without a name in the form, saying why, and creates nothing', async () => {
    const { user } = await sys.newUser('page-noname@example.com');
    const { page, context } = await signedIn(user.id);
    await page.getByLabel('Name').fill('   ');
    await page.getByLabel('Name').press('Enter');
    expect(await page.getByRole('alert').textContent()).toMatch(/name is required/);
    expect((await sys.admin.auth.listApiKeys({ userId: user.id })).apiKeys).toHaveLength(1);
    await context.close();
  });

  it('draws the usage chart from billing after a few conversions, with the recent calls', async () => {
    const { user, key } = await sys.newUser('page-usage@example.com');
    for (const kind of ['summary', 'email', 'action_items']) {
      const res = await fetch(`${sys.baseUrl}/api/v1/convert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transcript: TRANSCRIPT, kind }),
      });
      expect(res.status).toBe(200);
    }
    const usage = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
    const { page, context, csp } = await signedIn(user.id);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(`${app.url}/settings/usage`);
    await page.waitForFunction("window.Chart && Chart.getChart(document.getElementById('usage-chart')) !== undefined");
    // In the page: what Chart.js drew from, and how many pixels of the canvas it painted.
    const drawn = (await page.evaluate(`(() => {
      const canvas = document.getElementById('usage-chart');
      const chart = Chart.getChart(canvas);
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return { labels: chart.data.labels, data: chart.data.datasets[0].data, painted };
    })()`)) as { labels: string[]; data: number[]; painted: number };
    const today = new Date().toISOString().slice(0, 10);
    const used = usage.counters.credits_used as number;
    expect(used).toBeGreaterThan(0);
    expect(drawn.labels[drawn.labels.length - 1]).toBe(today);
    expect(drawn.data.reduce((a, b) => a + b, 0)).toBe(used);
    expect(await page.locator('#credits-used').textContent()).toBe(String(used));
    expect(drawn.data[drawn.data.length - 1]).toBe(drawn.data.reduce((a, b) => a + b, 0));
    expect(drawn.painted).toBeGreaterThan(500);
    const rows = page.locator('table.recent tbody tr');
    expect(await rows.count()).toBe(3);
    for (const kind of await rows.locator('td:nth-child(2)').allTextContents()) expect(kind).toBe('Conversion');
    await screenshot(page, 'usage');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('refuses posts without the CSRF token, with a wrong one, or from another site, and changes nothing', async () => {
    const { user } = await sys.newUser('page-csrf@example.com');
    const { page, context } = await signedIn(user.id);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/settings/developer/keys`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body) });
    expect((await post({ name: 'no token', expires: '90' })).status).toBe(403);
    expect((await post({ name: 'wrong token', expires: '90', _csrf: csrf.slice(0, -2) + 'xx' })).status).toBe(403);
    expect((await post({ name: 'cross site', expires: '90', _csrf: csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post({ name: 'other origin', expires: '90', _csrf: csrf }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await sys.admin.auth.listApiKeys({ userId: user.id })).apiKeys.map((k) => k.name)).toEqual(['test']);
    // A form the parser refuses (too many fields, too large) is the sender's error, not a 500.
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, 'x']));
    expect((await post({ ...many, _csrf: csrf })).status).toBe(413);
    expect((await post({ name: 'x'.repeat(20_000), _csrf: csrf })).status).toBe(413);
    // The same post with the token is accepted: the refusals above were the token's doing.
    expect((await post({ name: 'with token', expires: '90', _csrf: csrf })).status).toBe(201);
    expect((await sys.admin.auth.listApiKeys({ userId: user.id })).apiKeys).toHaveLength(2);
    await context.close();
  });

  it('refuses a used sign-in link and an expired one', async () => {
    const { user } = await sys.newUser('page-links@example.com');
    const context = await app.browser.newContext();
    const page = await context.newPage();
    const link = await linkFor(user.id);
    await page.goto(link);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${app.url}/settings/developer`);

    const other = await app.browser.newContext();
    const again = await other.newPage();
    await again.goto(link);
    await again.getByRole('button', { name: 'Continue' }).click();
    expect(await again.locator('h1').textContent()).toBe('This sign-in link has expired or was already used');
    await screenshot(again, 'sign-in-used');
    await again.goto(`${app.url}/settings/developer`);
    expect(again.url()).toBe(`${app.url}/signed-out?expired=1`);

    const late = await linkFor(user.id);
    sys.authClock.advance(15 * 60_000 + 1000);
    try {
      await again.goto(late);
      await again.getByRole('button', { name: 'Continue' }).click();
      expect(await again.locator('h1').textContent()).toBe('This sign-in link has expired or was already used');
    } finally {
      sys.authClock.set(new Date());
    }
    await other.close();
    await context.close();
  });

  it("cannot revoke another user's key, by its confirmation page or by posting its id", async () => {
    const a = await sys.newUser('page-owner-a@example.com');
    const b = await sys.newUser('page-owner-b@example.com');
    const { page, context } = await signedIn(a.user.id);
    await page.goto(`${app.url}/settings/developer/keys/${b.keyId}/revoke`);
    expect(await page.locator('h1').textContent()).toBe('No such key');
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const res = await fetch(`${app.url}/settings/developer/keys/${b.keyId}/revoke`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    expect(res.status).toBe(404);
    expect((await me(b.key)).status).toBe(200);
    await context.close();
  });

  it('creates and rotates the webhook signing secret, shown once, and saves the default endpoint', async () => {
    const { user } = await sys.newUser('page-hooks@example.com');
    const { page, context } = await signedIn(user.id);
    expect(await page.locator('#secret-state').textContent()).toBe('None yet');
    await page.getByRole('button', { name: 'Create signing secret' }).click();
    const first = await page.locator('#new-secret').inputValue();
    expect(first).toMatch(/^whsec_/);
    await page.getByRole('link', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(first);
    expect(await page.locator('#secret-state').textContent()).toBe(`…${first.slice(-4)}`);

    await page.getByRole('link', { name: 'Rotate secret…' }).click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const second = await page.locator('#new-secret').inputValue();
    expect(second).not.toBe(first);
    expect(await page.locator('.reveal').textContent()).toMatch(/previous secret until/);
    await screenshot(page, 'developer-webhook-secret');

    await page.getByLabel('Endpoint URL').fill('http://10.0.0.1/hooks');
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    expect(await page.getByRole('alert').textContent()).toBeTruthy();
    await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/murmur');
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.waitForURL(/notice=endpoint-saved/);
    expect(await page.getByLabel('Endpoint URL').inputValue()).toBe('https://hooks.example.com/murmur');
    expect((await sys.admin.transcription.getWebhookSettings({ userId: user.id })).settings?.defaultUrl).toBe('https://hooks.example.com/murmur');
    await context.close();
  });

  it('signs out, after which the old session cookie opens nothing', async () => {
    const { user } = await sys.newUser('page-signout@example.com');
    const { page, context } = await signedIn(user.id);
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
    const res = await fetch(`${app.url}/settings/developer`, { redirect: 'manual', headers: { cookie } });
    expect([res.status, res.headers.get('location')]).toEqual([303, '/signed-out?expired=1']);
    await context.close();
  });

  it('sends a strict CSP, refuses framing, never caches pages, and sets the session cookie HttpOnly and SameSite=Lax', async () => {
    const { user } = await sys.newUser('page-headers@example.com');
    const { token } = await sys.admin.auth.createSignInLink({ userId: user.id });
    const signIn = await fetch(`${app.url}/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }) });
    expect(signIn.status).toBe(303);
    const setCookie = signIn.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^murmur_session=sst_[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    const page = await fetch(`${app.url}/settings/developer`, { headers: { cookie: setCookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
  });

  it('fits a phone-sized screen without sideways scrolling', async () => {
    const { user } = await sys.newUser('page-phone@example.com');
    const { page, context } = await signedIn(user.id, { width: 390, height: 844 });
    for (const path of ['/settings/developer', '/settings/usage']) {
      await page.goto(`${app.url}${path}`);
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect([path, overflow]).toEqual([path, 0]);
      await screenshot(page, `phone${path.replace(/\//g, '-')}`);
    }
    await context.close();
  });
  it('Logs lists the calls made with the user’s keys, filters them, and a call’s detail copies its request id', async () => {
    const { user, key } = await sys.newUser('page-logs@example.com');
    const stranger = await sys.newUser('page-logs-stranger@example.com');
    const call = async (method: string, path: string, body?: unknown, who = key) => {
      const res = await fetch(`${sys.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${who}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { id: res.headers.get('x-request-id')!, body: (await res.json()) as Json };
    };
    await call('GET', '/api/v1/me');
    const missing = await call('GET', '/api/v1/recordings/rec_0000000000000000000000');
    const converted = await call('POST', '/api/v1/convert', { transcript: TRANSCRIPT, kind: 'summary' });
    const theirs = await call('GET', '/api/v1/me', undefined, stranger.key);
    await sys.requestLog.flush();

    const { page, context, csp } = await signedIn(user.id);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.waitForURL(`${app.url}/settings/logs`);
    expect(await page.locator('h1').textContent()).toBe('Logs');
    const rows = page.locator('tr.call');
    expect(await rows.count()).toBe(3);
    expect(await page.locator(`tr[data-request-id="${theirs.id}"]`).count()).toBe(0);
    const refused = page.locator(`tr[data-request-id="${missing.id}"]`);
    expect(await refused.getAttribute('class')).toContain('refused');
    expect((await refused.locator('td[data-label="Status"]').textContent())?.replace(/\s+/g, ' ').trim()).toBe('404 not_found');
    expect(await refused.locator('td[data-label="Call"] code').first().textContent()).toBe('/api/v1/recordings/{id}');
    await screenshot(page, 'logs');

    // Only refusals: the 404 alone.
    await page.getByLabel('Status').selectOption('4xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=4xx/);
    expect(await page.locator('tr.call').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-request-id')))).toEqual([missing.id]);
    await page.getByRole('link', { name: 'Clear filters' }).click();
    await page.waitForURL(`${app.url}/settings/logs`);

    // The conversion's detail: its request id to copy, and what it charged.
    await page.locator(`tr[data-request-id="${converted.id}"] a`).click();
    await page.waitForURL(`${app.url}/settings/logs/${converted.id}`);
    expect(await page.locator('#request-id').inputValue()).toBe(converted.id);
    expect(await page.locator('#detail-credits').textContent()).toBe(String(converted.body.credits_charged));
    expect(converted.body.credits_charged).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Copy' }).first().click();
    await page.waitForFunction("document.querySelector('button.copy')?.textContent === 'Copied'");
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(converted.id);
    expect(await page.content()).not.toContain(key);

    // Another user's call is no one's detail here.
    const foreign = await page.goto(`${app.url}/settings/logs/${theirs.id}`);
    expect(foreign?.status()).toBe(404);
    expect(csp).toEqual([]);
    await context.close();
  });
});
