/**
 * Issue #33: the Record page in real headless Chromium over the whole system. Chromium's fake
 * microphone plays real speech (a LibriVox utterance from Debian's pocketsphinx-testdata); the
 * page gets a session-bound listen token from the app, streams MediaRecorder's Opus-in-WebM
 * slices to the gateway's GET /api/v1/listen, shows the words live, and Stop saves the
 * recording: it is then in the user's library with the words the page showed, and charged in
 * their usage. A refused stream (no credits) and an ended session show their reasons in words.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { get, startSystem, type TestSystem } from '../../gateway/test/support/system';
import { wordErrorRate } from '../../services/transcription/src/wer';
import { screenshot, signInAs, startApp, type TestApp } from './support/app-browser';

jest.setTimeout(60_000);

type Json = Record<string, any>;

const SPEECH = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them';

/**
 * The fake microphone's file: the utterance as 48 kHz 16-bit PCM (the rate Chromium captures at),
 * after 1 s of silence (the recorder starts a moment after the microphone opens) and before 2 s
 * (the utterance ends, so its final comes before Stop).
 */
function fakeMicrophoneWav(dir: string): string {
  const wav = path.join(dir, 'speech-48k.wav');
  execFileSync('ffmpeg', ['-loglevel', 'error', '-i', SPEECH, '-af', 'adelay=1000,apad=pad_dur=2', '-ar', '48000', '-ac', '1', '-c:a', 'pcm_s16le', wav]);
  return wav;
}

describe('the app: Record in Chromium with a fake microphone', () => {
  let sys: TestSystem;
  let app: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'murmur-record-'));
    const wav = fakeMicrophoneWav(dir);
    sys = await startSystem({ ai: true });
    // %noloop: the file plays once, then the microphone is silent (by default it repeats).
    app = await startApp(sys, {}, ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}%noloop`]);
  });
  afterAll(async () => {
    await app?.stop();
    await sys?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A new browser context signed in as the user, on the Record page. */
  async function onRecordPage(userId: string): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
    const { context, page, csp } = await signInAs(sys, app, userId, { width: 1100, height: 800 });
    await page.getByRole('link', { name: 'Record' }).click();
    await page.waitForURL(`${app.url}/record`);
    return { context, page, csp };
  }

  it('records real speech: words live, Stop saves a recording with those words, and usage charges its seconds', async () => {
    const { user, key } = await sys.newUser('record-speech@example.com');
    const { context, page, csp } = await onRecordPage(user.id);
    expect(await page.locator('h1').textContent()).toBe('Record');
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Record');

    await page.getByRole('button', { name: 'Record' }).click();
    // Partials (grey, replaced) come while the utterance is spoken, the final at its end.
    await page.locator('#partial-text').filter({ hasText: /\w/ }).waitFor({ timeout: 15_000 });
    await page.locator('#final-text').filter({ hasText: /\w/ }).waitFor({ timeout: 20_000 });
    await screenshot(page, 'record-live-words');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('#record-saved').waitFor({ state: 'visible', timeout: 15_000 });

    expect(await page.locator('#record-saved').textContent()).toMatch(/^Saved\. Recording rec_\w+ · \d+ s of audio, 1 credit charged\.$/);
    expect(await page.locator('#record-closed').textContent()).toBe('Connection closed: code 1000 (closed).');
    expect(await page.locator('#record-error').isHidden()).toBe(true);
    const recordingId = (await page.locator('#recording-id').textContent())!;
    const shown = (await page.locator('#final-text').textContent())!;
    // Chromium's Opus at 48 kHz, resampled for pocketsphinx: about half the words right (0.5 measured), far from noise.
    expect(wordErrorRate(REFERENCE, shown).wer).toBeLessThan(0.7);
    await screenshot(page, 'record-saved');

    // The recording is the user's, with the words the page showed.
    const rec = await get(sys.baseUrl, `/api/v1/recordings/${recordingId}?words=true`, key);
    expect(rec.status).toBe(200);
    const words = (rec.body as Json).transcript.words as Json[];
    expect(words.length).toBeGreaterThan(5);
    expect(words.map((w) => w.text).join(' ')).toBe(shown);
    // Another user cannot see it.
    const other = await sys.newUser('record-other@example.com');
    expect((await get(sys.baseUrl, `/api/v1/recordings/${recordingId}`, other.key)).status).toBe(404);

    // Charged like any transcription: the seconds received (speech and silence, up to Stop), one started minute.
    const usage = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
    expect(usage.counters.transcriptions).toBe(1);
    expect(usage.counters.transcription_seconds).toBeGreaterThanOrEqual(8);
    expect(usage.counters.transcription_seconds).toBeLessThan(30);
    expect(usage.credits.monthly_remaining).toBe(99);
    await page.getByRole('link', { name: 'Usage' }).click();
    expect(await page.locator('table.recent tbody tr').first().locator('td').nth(1).textContent()).toBe('Transcription');

    expect(csp).toEqual([]);
    // Neither the listen token nor the session's cookie is in the app's log.
    expect(app.logLines.filter((l) => /lst_|sst_|sit_/.test(l))).toEqual([]);
    await context.close();
  });

  it('shows the refusal in words with its close code: no credits (4402), then an ended session', async () => {
    const { user } = await sys.newUser('record-poor@example.com');
    await sys.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
    const { context, page, csp } = await onRecordPage(user.id);
    await page.getByRole('button', { name: 'Record' }).click();
    await page.locator('#record-closed').waitFor({ state: 'visible', timeout: 10_000 });
    expect(await page.locator('#record-error').textContent()).toMatch(/credits.*\(insufficient_tokens\)$/i);
    expect(await page.locator('#record-closed').textContent()).toBe('Connection closed: code 4402 (insufficient_tokens).');
    expect(await page.locator('#record-saved').isHidden()).toBe(true);
    expect(await page.getByRole('button', { name: 'Record' }).isEnabled()).toBe(true);
    await screenshot(page, 'record-refused');

    // Signed out elsewhere: the token request is refused, and the page says so.
    const cookie = (await context.cookies()).find((c) => c.name === 'murmur_session')!;
    await sys.admin.auth.endSession({ sessionToken: cookie.value });
    await page.getByRole('button', { name: 'Record' }).click();
    await page.locator('#record-error').filter({ hasText: 'Your session has ended' }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#record-error').textContent()).toMatch(/^Your session has ended: Sign in again/);
    expect(await page.locator('#record-status').textContent()).toBe('Not recording.');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('answers POST /record/token only to a same-origin post with the session CSRF token, and lets only this page connect to the API', async () => {
    const { user } = await sys.newUser('record-token@example.com');
    const { context, page } = await onRecordPage(user.id);
    const post = (csrf: string) =>
      page.evaluate(async (body) => {
        const res = await fetch('/record/token', { method: 'POST', body: new URLSearchParams(body) });
        return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
      }, { _csrf: csrf });
    const csrf = (await page.locator('#record-form input[name=_csrf]').inputValue())!;
    const ok = await post(csrf);
    expect(ok.status).toBe(201);
    const body = JSON.parse(ok.text) as Json;
    expect(body.token).toMatch(/^lst_[A-Za-z0-9_-]{43}$/);
    expect(body.listen_url).toBe(`${sys.baseUrl.replace(/^http/, 'ws')}/api/v1/listen`);
    expect((await post('wrong')).status).toBe(403);
    // The token is the signed-in user's, bound to this session.
    const { principal } = await sys.clients.auth.redeemListenToken({ token: body.token });
    expect(principal?.userId).toBe(user.id);
    expect(principal?.keyId).toMatch(/^ses_/);

    const gatewayOrigin = sys.baseUrl.replace(/^http/, 'ws');
    const recordCsp = (await page.request.get(`${app.url}/record`)).headers()['content-security-policy'];
    expect(recordCsp).toContain(`connect-src 'self' ${gatewayOrigin};`);
    const developerCsp = (await page.request.get(`${app.url}/settings/developer`)).headers()['content-security-policy'];
    expect(developerCsp).toContain("connect-src 'self';");
    await context.close();
  });
});
