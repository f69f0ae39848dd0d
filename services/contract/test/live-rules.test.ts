/**
 * The live-transcription rules (live-rules.ts): the query options, and the close-code table that
 * docs/live.md prints — each error a stream can end with is in that table with 4000 + its status.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES, LIVE_ERROR_CODES, liveCloseCodeOf, listenUrlOf, liveOptionsOf, MurmurError } from '../src';

const options = (q: string) => liveOptionsOf(new URLSearchParams(q));

function refusal(q: string): { code: string; param: string | null } {
  try {
    options(q);
  } catch (err) {
    if (err instanceof MurmurError) return { code: err.code, param: err.param };
    throw err;
  }
  throw new Error(`accepted ${q}`);
}

describe('the listen URL of a public API address', () => {
  it.each([
    ['https://api.murmur.example', 'wss://api.murmur.example/api/v1/listen'],
    ['https://api.murmur.example:8443/', 'wss://api.murmur.example:8443/api/v1/listen'],
    ['http://127.0.0.1:8080', 'ws://127.0.0.1:8080/api/v1/listen'],
    ['https://murmur.example/gateway/', 'wss://murmur.example/api/v1/listen'],
  ])('%s → %s', (api, listen) => {
    expect(listenUrlOf(api)).toBe(listen);
  });
});

describe('live options', () => {
  it('defaults to 16 kHz linear16 without saving', () => {
    expect(options('')).toEqual({ encoding: 'linear16', sampleRate: 16000, language: '', save: false, title: '', folderId: '' });
    expect(options('encoding=webm&save=true&title=Stand-up&token=x')).toMatchObject({ encoding: 'webm', save: true, title: 'Stand-up' });
    expect(options('sample_rate=48000').sampleRate).toBe(48000);
  });

  it.each([
    ['encoding=mp3', 'encoding'],
    ['sample_rate=7999', 'sample_rate'],
    ['sample_rate=48001', 'sample_rate'],
    ['sample_rate=16000.5', 'sample_rate'],
    ['sample_rate=abc', 'sample_rate'],
    ['encoding=ogg&sample_rate=16000', 'sample_rate'],
    ['save=yes', 'save'],
    [`title=${'x'.repeat(501)}`, 'title'],
    ['model=nova', 'model'],
  ])('refuses %s naming %s', (q, param) => {
    expect(refusal(q)).toEqual({ code: 'invalid_request', param });
  });
});

describe('live close codes', () => {
  it('are 4000 + the HTTP status of the error code', () => {
    expect(liveCloseCodeOf('invalid_api_key')).toBe(4401);
    expect(liveCloseCodeOf('insufficient_tokens')).toBe(4402);
    expect(liveCloseCodeOf('audio_too_fast')).toBe(4429);
    for (const code of LIVE_ERROR_CODES) expect(liveCloseCodeOf(code)).toBe(4000 + ERROR_CODES[code].http);
  });

  it('are all in docs/live.md, each error code on the row of its close code', () => {
    const doc = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'live.md'), 'utf8');
    const rows = new Map<number, string>();
    for (const m of doc.matchAll(/^\| (\d{4}) \| ([^|]*) \|/gm)) rows.set(Number(m[1]), m[2]!);
    for (const code of LIVE_ERROR_CODES) expect([code, rows.get(liveCloseCodeOf(code)) ?? '']).toEqual([code, expect.stringContaining(`\`${code}\``)]);
    // And no row names a code a stream cannot end with.
    for (const [close, cell] of [...rows].filter(([c]) => c >= 4000)) {
      for (const m of cell.matchAll(/`([a-z_]+)`/g)) expect([close, LIVE_ERROR_CODES as readonly string[]]).toEqual([close, expect.arrayContaining([m[1]])]);
    }
  });
});
