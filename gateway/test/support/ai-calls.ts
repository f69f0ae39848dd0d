/**
 * Raw HTTP calls to the AI routes for tests of bodies real clients get wrong (cut short,
 * stalled, options in any order), with a guard that turns a hang into a failed assertion, and
 * the billing facts that show whether anything was charged.
 */
import * as http from 'node:http';
import type { TestSystem } from './system';

export const SPEECH_WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0930.wav';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** Only to catch a hang: far longer than any of these answers takes. */
const HANG_MS = 30_000;

/**
 * Keeps a request's body arriving — a few of `bytes` at a time — until `until()` holds, so the
 * server's body idle timeout cannot end it before what the test waits for has happened; then
 * stops sending. Rejects when `bytes` run out first.
 */
export async function feedUntil(req: http.ClientRequest, bytes: Buffer, until: () => boolean, everyMs = 50): Promise<void> {
  for (let at = 0; !until(); at += 16) {
    if (at >= bytes.length) throw new Error('the body ran out before the awaited state was reached');
    req.write(bytes.subarray(at, at + 16));
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * POSTs `pieces` (a string or Buffer each) to `path`; with `stall`, the request is left open
 * after the last piece (a client that stopped sending) — after `feed` (feedUntil) when given.
 * Rejects if no answer comes in time.
 */
export function rawPost(
  baseUrl: string,
  path: string,
  key: string,
  headers: Record<string, string>,
  pieces: Array<string | Buffer>,
  opts: { stall?: boolean; feed?: { bytes: Buffer; until: () => boolean } } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, agent: false });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to POST ${path} in ${HANG_MS} ms`));
    }, HANG_MS);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any = null;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    for (const piece of pieces) req.write(piece);
    if (opts.feed) feedUntil(req, opts.feed.bytes, opts.feed.until).catch(reject);
    else if (!opts.stall) req.end();
  });
}

/** Billing's view of a user: what the contract shows (`/usage`) and every ledger row. */
export async function creditsOf(sys: TestSystem, userId: string) {
  const { usage } = await sys.admin.billing.getUsage({ userId });
  const { entries } = await sys.admin.billing.listLedgerEntries({ userId, pageSize: 100, pageToken: '' });
  return { monthlyRemaining: Number(usage?.monthlyCreditsRemaining), creditsUsed: Number(usage?.creditsUsed), ledger: entries.map((e) => `${e.kind}:${e.monthlyDelta}`).sort() };
}

/** Multipart body parts in the order given (a Buffer value is sent as its bytes, UTF-8 or not). */
export type FormPart = { name: string; value: string | Buffer } | { name: string; file: Buffer };
export const FORM_BOUNDARY = 'murmur-ai-test-5c1e';
export const FORM_TYPE = `multipart/form-data; boundary=${FORM_BOUNDARY}`;

export function formBody(parts: FormPart[], close = true): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('value' in p) chunks.push(Buffer.from(`--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
    else {
      chunks.push(Buffer.from(`--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"; filename="speech.wav"\r\nContent-Type: audio/wav\r\n\r\n`));
      chunks.push(p.file, Buffer.from('\r\n'));
    }
  }
  if (close) chunks.push(Buffer.from(`--${FORM_BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}
