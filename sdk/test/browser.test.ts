/**
 * The SDK in a browser: its `browser` entry (built by `tsc -b`, picked by the package's export
 * conditions) loaded as ES modules by real headless Chromium (Debian's, driven by playwright-core;
 * nothing downloaded), against a real Murmur on loopback. What a page really does: it holds no
 * API key and the REST API sends no CORS headers, so its server (this test) makes a listen token,
 * and the page streams speech over the WebSocket with it; and it verifies a webhook signed by the
 * transcription service's own signer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Murmur } from '@murmur/sdk';
import { newSecret, webhookHeaders } from '../../services/transcription/src/webhooks/signature';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { CHROMIUM } from '../../app/test/support/app-browser';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';
import { resolveExport, startModuleServer, type ModuleServer } from './support/module-server';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them';
const DIST = path.join(__dirname, '../dist');

/** Every module the browser entry loads, following relative imports (static and dynamic) from `entry`. */
function moduleGraph(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const source = fs.readFileSync(file, 'utf8');
    seen.set(file, source);
    for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.[^"']+)\1/g)) visit(path.resolve(path.dirname(file), m[2]!));
  };
  visit(entry);
  return seen;
}

/** The specifiers of every non-relative import in `source` (static or dynamic). */
function bareImports(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])([^."'][^"']*)\1/g)].map((m) => m[2]!);
}

describe('the browser entry', () => {
  it('is what the browser and worker conditions pick, and imports nothing from node: (statically or dynamically)', () => {
    for (const condition of ['browser', 'worker', 'workerd', 'edge-light']) {
      expect(resolveExport(path.join(__dirname, '..'), [condition, 'import', 'default'])).toBe(path.join(DIST, 'browser.js'));
    }
    expect(resolveExport(path.join(__dirname, '..'), ['node', 'import', 'default'])).toBe(path.join(DIST, 'index.js'));
    const graph = moduleGraph(path.join(DIST, 'browser.js'));
    expect([...graph.keys()].map((f) => path.relative(DIST, f))).toEqual(expect.arrayContaining(['browser.js', 'client.js', 'live.js', 'listen.js', 'webhooks.js']));
    const imported = new Set([...graph.values()].flatMap(bareImports));
    expect([...imported].sort()).toEqual(['eventsource-parser', 'standardwebhooks']);
    // The Node entry does reach node: — the check above can tell.
    expect([...moduleGraph(path.join(DIST, 'index.js')).values()].flatMap(bareImports)).toContain('node:fs');
  });
});

describe('the SDK in Chromium against a running Murmur', () => {
  let sys: TestSystem;
  let modules: ModuleServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    modules = await startModuleServer({ '/speech.pcm': fs.readFileSync(WAV).subarray(44) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await page.goto(modules.url);
    // The module script has run once the page loaded; a module that failed to load left a page error instead.
    await page.waitForFunction(() => (globalThis as { sdk?: unknown }).sdk !== undefined, undefined, { timeout: 10_000 }).catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await modules?.close();
    await sys?.stop();
  });

  it('loads the browser entry as ES modules, with no error', async () => {
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate(() => Object.keys((globalThis as unknown as { sdk: object }).sdk).includes('connectLive'))).toBe(true);
    expect(modules.requested).toContain('/sdk/dist/browser.js');
    expect(modules.requested).not.toContain('/sdk/dist/index.js');
    expect(modules.requested.filter((p) => p.includes('node-'))).toEqual([]);
  });

  it('streams speech with a listen token its server made: finals, then the summary; the used token is refused with AuthenticationError', async () => {
    const { key } = await sys.newUser('sdk-browser@example.com');
    const server = new Murmur({ apiKey: key, baseUrl: sys.baseUrl });
    const { token } = await server.listen.createToken();
    const result = await page.evaluate(
      async ({ baseUrl, token }) => {
        const sdk = (globalThis as any).sdk;
        const session = await sdk.connectLive({ baseUrl, token });
        const events: Array<{ type: string; text?: string; words?: unknown[] }> = [];
        const reading = (async () => {
          for await (const event of session) events.push(event);
        })();
        // The audio as a web ReadableStream (a page's fetch), piped in.
        const audio = await fetch('/speech.pcm');
        const sent = await session.pipe(audio.body);
        const summary = await session.close();
        await reading;
        const reused = await sdk.connectLive({ baseUrl, token }).catch((e: unknown) => e);
        return {
          id: session.id,
          sent,
          summary,
          types: events.map((e) => e.type),
          finals: events.filter((e) => e.type === 'final').map((e) => e.text).join(' '),
          words: events.filter((e) => e.type === 'final').flatMap((e) => e.words ?? []).length,
          reused: { isAuthenticationError: reused instanceof sdk.AuthenticationError, isApiError: reused instanceof sdk.ApiError, code: reused.code, status: reused.status, requestId: reused.requestId },
        };
      },
      { baseUrl: sys.baseUrl, token },
    );
    expect(result.id).toMatch(/^trn_/);
    expect(result.sent).toBe(fs.statSync(WAV).size - 44);
    expect(result.types.at(-1)).toBe('closed');
    expect(result.types).toContain('final');
    expect(wordErrorRate(REFERENCE, result.finals).wer).toBeLessThan(0.5);
    expect(result.words).toBeGreaterThan(10);
    expect(result.summary).toMatchObject({ type: 'closed', credits_charged: 1, recording_id: null });
    expect(result.reused).toEqual({ isAuthenticationError: true, isApiError: true, code: 'invalid_api_key', status: 401, requestId: expect.stringMatching(/^req_/) });
    expect((await server.usage()).counters.transcriptions).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it('verifies a webhook signed by the transcription service’s signer, and refuses an altered one', async () => {
    const secret = newSecret();
    const body = JSON.stringify({ type: 'transcription.completed', timestamp: new Date().toISOString(), data: { id: 'trn_browser', status: 'completed' } });
    const headers = webhookHeaders([secret], 'msg_browser', new Date(), body);
    const result = await page.evaluate(
      ({ body, headers, secret }) => {
        const sdk = (globalThis as any).sdk;
        const event = sdk.verifyWebhook(body, new Headers(headers), secret);
        let altered: unknown;
        try {
          sdk.verifyWebhook(body.replace('trn_browser', 'trn_other'), headers, secret);
        } catch (err) {
          altered = { isSignatureError: err instanceof sdk.WebhookSignatureError, message: (err as Error).message };
        }
        return { event, altered };
      },
      { body, headers, secret },
    );
    expect(result.event).toEqual(JSON.parse(body));
    expect(result.altered).toEqual({ isSignatureError: true, message: expect.stringContaining('No matching signature') });
  });

  it('says a file path needs Node, before any request', async () => {
    const message = await page.evaluate(async (baseUrl) => {
      const sdk = (globalThis as any).sdk;
      const murmur = new sdk.Murmur({ apiKey: `svc_${'0'.repeat(64)}`, baseUrl });
      return murmur.transcribe({ audio: './standup.wav' }).then(
        () => 'sent',
        (err: Error) => `${err.name}: ${err.message}`,
      );
    }, sys.baseUrl);
    expect(message).toBe('MurmurError: A file path (./standup.wav) needs Node.js; here, pass a Blob or File, bytes, a stream, or an http(s) URL.');
  });
});
