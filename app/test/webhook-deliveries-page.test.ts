/**
 * Issue #36: Settings → Developer → Webhook deliveries in real headless Chromium over the whole
 * system. A real transcription job (REST, pocketsphinx) ends with a webhook to a receiver on
 * loopback (plain http on 127.0.0.1, allowed here as an operator allows it for local
 * development) that answers 500 once and then 204: the page lists the delivery with both
 * attempts, and its Resend button makes a real new attempt at the receiver, which then shows on
 * the page as round 2. Also: the state filter, another user's page and Resend, and the per-user
 * retry cap answered as a page that says when to try again.
 */
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { WEBHOOK_RETRY_LIMIT } from '@murmur/contract';
import { DEFAULT_OUTBOUND_POLICY } from '@murmur/kit';
import { transcription } from '@murmur/proto';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';
import { screenshot, signInAs, startApp, type TestApp } from './support/app-browser';

jest.setTimeout(180_000);

/** A card reader's "ten of clubs" (1 s): a job that ends quickly. */
const SHORT = '/usr/share/pocketsphinx/test/data/cards/001.wav';

interface Received {
  path: string;
  webhookId: string;
}

describe('the app: Webhook deliveries in Chromium', () => {
  let sys: TestSystem;
  let app: TestApp;
  let receiver: http.Server;
  let base = '';
  const received: Received[] = [];
  /** Resolved when the receiver has answered its n-th request (n from 1). */
  const waiters: Array<{ n: number; resolve: () => void }> = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push({ path: req.url!, webhookId: String(req.headers['webhook-id']) });
        const first = received.filter((r) => r.path === req.url).length === 1;
        res.on('finish', () => {
          for (const w of waiters.filter((w) => received.length >= w.n)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        });
        res.writeHead(req.url!.startsWith('/flaky') && first ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    sys = await startSystem({
      ai: true,
      jobs: {
        webhooks: {
          policy: { ...DEFAULT_OUTBOUND_POLICY, allowCidrs: ['127.0.0.1/32'], ports: [80, 443, port] },
          allowHttp: true,
          // The retry after the 500 is due at once rather than in 5 s (the production schedule is
          // checked in webhook-schedule.test.ts).
          retrySeconds: [0, 0, 0, 0, 0, 0, 0],
        },
      },
    });
    app = await startApp(sys);
  });
  afterAll(async () => {
    await app?.stop();
    await sys?.stop();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  /** Resolves once the receiver has answered `n` requests in all. */
  function receivedCount(n: number): Promise<void> {
    if (received.length >= n) return Promise.resolve();
    return new Promise((resolve) => waiters.push({ n, resolve }));
  }

  const signedIn = (userId: string) => signInAs(sys, app, userId);

  /** Submits a one-second job with `webhook_url` over REST; its id. */
  async function submit(key: string, webhookUrl: string): Promise<string> {
    const form = new FormData();
    form.append('webhook_url', webhookUrl);
    form.append('audio', new Blob([readFileSync(SHORT)], { type: 'audio/wav' }), 'cards.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await res.json()) as { id: string };
    expect(res.status).toBe(202);
    return body.id;
  }

  /** The user's delivery once `done` holds for it (its attempts are recorded just after the receiver answers). */
  async function deliveryWhen(userId: string, done: (d: transcription.WebhookDeliveryRecord) => boolean): Promise<transcription.WebhookDeliveryRecord> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [d] = (await sys.admin.transcription.listWebhookDeliveries(transcription.ListWebhookDeliveriesRequest.fromPartial({ ownerId: userId }))).deliveries;
      if (d && done(d)) return d;
      if (Date.now() > deadline) throw new Error(`delivery never got there: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The page reloaded until its first delivery shows `n` attempts. */
  async function reloadUntilAttempts(page: Page, n: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    while ((await page.locator('tr.attempt').count()) < n) {
      if (Date.now() > deadline) throw new Error(`the page never showed ${n} attempts`);
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
  }

  it('lists a real delivery with its failed and successful attempts, and Resend makes a new attempt at the receiver that then shows', async () => {
    const { user, key } = await sys.newUser('page-deliveries@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: user.id });
    const before = received.length;
    const jobId = await submit(key, `${base}/flaky-${user.id}`);
    await receivedCount(before + 2);
    const stored = await deliveryWhen(user.id, (d) => d.state === transcription.WebhookState.WEBHOOK_STATE_DELIVERED);
    expect(stored.attempts.map((a) => a.statusCode)).toEqual([500, 204]);

    const { page, context, csp } = await signedIn(user.id);
    await page.getByRole('link', { name: 'Webhook deliveries' }).click();
    await page.waitForURL(`${app.url}/settings/developer/webhooks`);
    expect(await page.locator('h1').textContent()).toBe('Webhook deliveries');
    const card = page.locator('article.delivery');
    expect(await card.count()).toBe(1);
    expect(await card.locator('.event').textContent()).toBe('transcription.completed');
    expect(await card.locator('.job').textContent()).toBe(jobId);
    expect(await card.locator('.state').textContent()).toBe('Delivered');
    expect(await card.locator('.attempt-count').textContent()).toBe('2');
    expect(await card.locator('.last-status').textContent()).toBe('204');
    // Newest first: the 204, then the 500 with the sender's reason; each with its time and latency.
    const rows = card.locator('tr.attempt');
    expect(await rows.locator('.code').allTextContents()).toEqual(['204', '500']);
    expect(await rows.locator('.round').allTextContents()).toEqual(['1 · 2', '1 · 1']);
    expect(await rows.locator('.attempt-error').allTextContents()).toEqual(['', 'the endpoint answered HTTP 500']);
    expect(await rows.locator('.latency').allTextContents()).toEqual(stored.attempts.map((a) => `${a.latencyMs.toLocaleString('en')} ms`).reverse());
    expect(await rows.locator('time').nth(1).getAttribute('datetime')).toBe(stored.attempts[0]!.startedAt!.toISOString());
    await screenshot(page, 'webhook-deliveries');

    const resendAt = received.length;
    await card.getByRole('button', { name: `Resend transcription.completed for ${jobId}` }).click();
    await page.waitForURL(/notice=resent/);
    expect(await page.getByRole('status').textContent()).toContain(jobId);
    await receivedCount(resendAt + 1);
    const resent = received[resendAt]!;
    expect(resent.path).toBe(`/flaky-${user.id}`);
    // The same event: the webhook-id of every attempt is the delivery's.
    expect(new Set(received.filter((r) => r.path === resent.path).map((r) => r.webhookId))).toEqual(new Set([stored.id]));

    await reloadUntilAttempts(page, 3);
    expect(await rows.locator('.round').first().textContent()).toBe('2 · 1');
    expect(await rows.locator('.code').first().textContent()).toBe('204');
    expect(await card.locator('.attempt-count').textContent()).toBe('3');
    expect(await card.locator('.state').textContent()).toBe('Delivered');
    await screenshot(page, 'webhook-deliveries-resent');

    // The state filter: none failed; delivered lists it.
    await page.getByLabel('State').selectOption('failed');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/state=failed/);
    expect(await page.locator('article.delivery').count()).toBe(0);
    expect(await page.locator('.empty').textContent()).toBe('No deliveries in this state.');
    await page.getByLabel('State').selectOption('delivered');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/state=delivered/);
    expect(await page.locator('article.delivery .job').allTextContents()).toEqual([jobId]);
    expect(csp).toEqual([]);
    await context.close();
  });

  it(`shows nothing of another user's, refuses their Resend, and says when to try again past ${WEBHOOK_RETRY_LIMIT.limit} resends a minute`, async () => {
    const owner = await sys.newUser('page-deliveries-owner@example.com');
    const other = await sys.newUser('page-deliveries-other@example.com');
    await sys.admin.transcription.rotateWebhookSecret({ userId: owner.user.id });
    const before = received.length;
    const jobId = await submit(owner.key, `${base}/ok-${owner.user.id}`);
    await receivedCount(before + 1);
    await deliveryWhen(owner.user.id, (d) => d.state === transcription.WebhookState.WEBHOOK_STATE_DELIVERED);

    // Another user: an empty list, and a Resend of the owner's job (a real form post with their own CSRF token) is not found.
    const theirs = await signedIn(other.user.id);
    await theirs.page.goto(`${app.url}/settings/developer/webhooks`);
    expect(await theirs.page.locator('article.delivery').count()).toBe(0);
    expect(await theirs.page.locator('.empty').textContent()).toMatch(/^No webhook deliveries yet/);
    const csrf = await theirs.page.locator('input[name=_csrf]').first().inputValue();
    const cookie = (await theirs.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const res = await fetch(`${app.url}/settings/developer/webhooks/${jobId}/resend`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    const refused = { status: res.status, text: await res.text() };
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('No such delivery');
    await theirs.context.close();

    // The owner's page, then the cap used up elsewhere (the public retry route's RPC): Resend says so and sends nothing.
    const { page, context, csp } = await signedIn(owner.user.id);
    await page.goto(`${app.url}/settings/developer/webhooks`);
    for (let i = 0; i < WEBHOOK_RETRY_LIMIT.limit; i++) await sys.admin.transcription.retryWebhook({ ownerId: owner.user.id, id: jobId });
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/resend'));
    await page.getByRole('button', { name: `Resend transcription.completed for ${jobId}` }).click();
    expect((await answer).status()).toBe(429);
    expect(await page.getByRole('alert').textContent()).toMatch(new RegExp(`^You can resend at most ${WEBHOOK_RETRY_LIMIT.limit} deliveries a minute, and have reached that\\. Try again in \\d+ seconds?; nothing was sent this time\\.$`));
    expect((await answer).headers()['retry-after']).toMatch(/^\d+$/);
    await screenshot(page, 'webhook-deliveries-resend-limit');
    expect(csp).toEqual([]);
    await context.close();
  });
});
