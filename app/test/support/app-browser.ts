/**
 * The app's web server on loopback over a whole test system, and real headless Chromium
 * (Debian's /usr/bin/chromium, driven by playwright-core; no browser is downloaded). Screenshots
 * go to $MURMUR_SCREENSHOT_DIR or the temp folder, never into the repo.
 */
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createServer } from 'node:http';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createLogger } from '@murmur/kit';
import { signInLink } from '../../src/web/config';
import { createAppServer, type AppServerOptions } from '../../src/web/server';
import { authSessions } from '../../src/web/session';
import type { TestSystem } from '../../../gateway/test/support/system';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = process.env.MURMUR_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'murmur-screenshots');

export interface TestApp {
  url: string;
  browser: Browser;
  /** Every line the app's server logged (at debug level), to check what never appears in them. */
  logLines: string[];
  stop(): Promise<void>;
}

/**
 * The app on a free loopback port, its own URL the OAuth issuer (the server listens first, so the
 * app is made knowing its address). `options` overrides the defaults, such as the policy of
 * Client ID Metadata Documents; `browserArgs` are added to Chromium's command line.
 */
export async function startApp(
  sys: TestSystem,
  options: Partial<Pick<AppServerOptions, 'clientMetadataPolicy' | 'now' | 'clients' | 'trustedProxies'>> = {},
  /** More Chromium switches (the Record page's fake microphone). */
  browserArgs: readonly string[] = [],
): Promise<TestApp> {
  const logLines: string[] = [];
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = createAppServer({
    clients: sys.admin,
    sessions: authSessions(sys.admin),
    log: createLogger('app', 'debug', { write: (line: string) => void logLines.push(line) }),
    apiUrl: sys.baseUrl,
    appUrl: url,
    secureCookies: false,
    ...options,
  });
  server.on('request', app);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', ...browserArgs] });
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    url,
    browser,
    logLines,
    async stop() {
      await browser.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A full-page screenshot to look at while building (see the module comment). */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Console messages of a page that report Content-Security-Policy violations. */
export function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

/**
 * A new browser context signed in as `userId` through the sign-in page (a one-time link made
 * with the admin clients, then Continue), landing on Settings → Developer; with the page's
 * Content-Security-Policy violations collected.
 */
export async function signInAs(sys: TestSystem, app: TestApp, userId: string, viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
  const { token } = await sys.admin.auth.createSignInLink({ userId });
  const context = await app.browser.newContext({ viewport });
  const page = await context.newPage();
  const csp = cspViolations(page);
  await page.goto(signInLink(app.url, token));
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${app.url}/settings/developer`).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}\nat ${page.url()}: ${(await page.content()).slice(0, 3000)}`);
  });
  return { context, page, csp };
}
