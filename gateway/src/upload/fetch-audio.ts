/**
 * Audio by URL (`audio_url`), fetched by the gateway and streamed into the same pipeline as an
 * upload, safely: the kit's outbound rules (outbound.ts: http(s) only, ports 80/443, one DNS
 * answer per hop, every address public, the connection pinned to the address checked), and:
 *  - at most 5 redirects, each one checked again the same way;
 *  - connect, idle and total timeouts; the size limit enforced as the bytes arrive (and at once
 *    from a Content-Length over it).
 * Refusals are `audio_url_forbidden` (nothing was sent anywhere); failures to download are
 * `audio_url_unreachable`; too much audio is `audio_too_large`. The URL's query string is never
 * logged (it often carries a signature).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { invalidParam, MurmurError } from '@murmur/contract';
import {
  checkedAddress,
  checkOutboundUrl,
  DEFAULT_OUTBOUND_POLICY,
  outboundConfigSchema,
  outboundPolicyOf,
  pinnedLookup,
  type OutboundPolicy,
  type Resolve,
} from '@murmur/kit';

export const AUDIO_URL = 'audio_url';
export const MAX_AUDIO_URL_CHARS = 2048;
export const MAX_AUDIO_URL_REDIRECTS = 5;

/**
 * Where an `audio_url` may point (MURMUR_AUDIO_URL_ALLOW_PRIVATE, _ALLOW_CIDRS, _PORTS) and how
 * long its download may take.
 */
export interface AudioUrlPolicy extends OutboundPolicy {
  /** Until the connection (TLS included) is up. */
  connectTimeoutMs: number;
  /** Longest silence while headers or audio are awaited. */
  idleTimeoutMs: number;
  /** The whole download, redirects included. */
  totalTimeoutMs: number;
}

export const DEFAULT_AUDIO_URL_POLICY: AudioUrlPolicy = {
  ...DEFAULT_OUTBOUND_POLICY,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  totalTimeoutMs: 30 * 60_000,
};

/** The gateway's settings of the policy (environment variables), checked at start. */
export const audioUrlConfigSchema = outboundConfigSchema('MURMUR_AUDIO_URL');

export function audioUrlPolicyOf(cfg: Record<string, unknown>): AudioUrlPolicy {
  return { ...DEFAULT_AUDIO_URL_POLICY, ...outboundPolicyOf('MURMUR_AUDIO_URL', cfg) };
}

/** An audio file being downloaded: its bytes (the size limit enforced), name and type. */
export interface FetchedAudio {
  stream: Readable;
  filename: string;
  contentType: string;
}

const forbidden = (why: string) =>
  new MurmurError('audio_url_forbidden', `\`audio_url\` ${why}, so nothing was fetched. Host the file at a public http(s) address, or upload it instead.`, { param: AUDIO_URL });
const unreachable = (why: string) =>
  new MurmurError('audio_url_unreachable', `The audio at \`audio_url\` could not be downloaded: ${why}. Nothing was charged; check the link works without signing in and try again, or upload the file instead.`, {
    param: AUDIO_URL,
  });

/** Checks the form of `raw` (a string, an absolute http(s) URL without credentials, an allowed port). */
export function parseAudioUrl(raw: unknown, policy: AudioUrlPolicy): URL {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_AUDIO_URL_CHARS) {
    throw invalidParam(AUDIO_URL, `\`audio_url\` must be an absolute http(s) URL of at most ${MAX_AUDIO_URL_CHARS} characters.`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParam(AUDIO_URL, '`audio_url` must be an absolute http(s) URL, such as https://example.com/meeting.mp3.');
  }
  return checkedUrl(url, policy);
}

const ERRORS = { forbidden, unreachable };

function checkedUrl(url: URL, policy: AudioUrlPolicy): URL {
  return checkOutboundUrl(url, policy, ERRORS);
}

/** Counts the bytes; past `maxBytes` fails with audio_too_large before passing them on. */
class SizeLimit extends Transform {
  private bytes = 0;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(tooLarge(this.maxBytes));
    done(null, chunk);
  }
}

function tooLarge(maxBytes: number): MurmurError {
  return new MurmurError('audio_too_large', `The audio at \`audio_url\` is larger than ${Math.floor(maxBytes / 1_000_000)} MB. Split it into shorter files.`, { param: AUDIO_URL });
}

function filenameOf(url: URL): string {
  const last = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last).slice(0, 255);
  } catch {
    return last.slice(0, 255);
  }
}

/** One GET to the checked address; resolves with the response (headers in), or a redirect target. */
function get(url: URL, target: { address: string; family: number }, policy: AudioUrlPolicy, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: pinnedLookup(target.address, target.family),
      headers: { 'user-agent': 'Murmur-AudioFetcher/1 (+audio_url)', accept: 'audio/*, video/*;q=0.9, */*;q=0.5' },
      signal,
    });
    const connect = setTimeout(() => req.destroy(unreachable(`no connection within ${policy.connectTimeoutMs / 1000} s`)), policy.connectTimeoutMs);
    req.on('socket', (socket) => {
      const up = () => clearTimeout(connect);
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', up);
      if (!socket.connecting) up();
    });
    req.setTimeout(policy.idleTimeoutMs, () => req.destroy(unreachable(`nothing arrived for ${policy.idleTimeoutMs / 1000} s`)));
    req.on('response', (res) => {
      clearTimeout(connect);
      resolve(res);
    });
    req.on('error', (err) => {
      clearTimeout(connect);
      reject(err);
    });
    req.on('close', () => clearTimeout(connect));
    req.end();
  });
}

/** What a failed request was, as the caller's error. */
function asFetchError(err: unknown, signal: AbortSignal, total: AbortSignal, policy: AudioUrlPolicy): MurmurError {
  if (err instanceof MurmurError) return err;
  if (total.aborted && !signal.aborted) return unreachable(`the download took longer than ${Math.round(policy.totalTimeoutMs / 1000)} s`);
  if (signal.aborted) return new MurmurError('request_timeout', 'The request was canceled before the audio was downloaded; nothing was charged.', { param: AUDIO_URL });
  const code = (err as NodeJS.ErrnoException).code;
  return unreachable(code ? `the connection failed (${code})` : 'the connection failed');
}

/**
 * Opens `raw` for reading under `policy`: follows up to 5 redirects (each checked), answers once
 * a 2xx response's headers are in. `signal` (the caller's request) cancels the download.
 */
export async function fetchAudioUrl(raw: unknown, policy: AudioUrlPolicy, opts: { maxBytes: number; signal?: AbortSignal; resolve?: Resolve }): Promise<FetchedAudio> {
  let url = parseAudioUrl(raw, policy);
  const signal = opts.signal ?? new AbortController().signal;
  const total = AbortSignal.timeout(policy.totalTimeoutMs);
  const both = AbortSignal.any([signal, total]);
  for (let redirects = 0; ; redirects++) {
    const target = await checkedAddress(url, policy, ERRORS, opts.resolve);
    let res: http.IncomingMessage;
    try {
      res = await get(url, target, policy, both);
    } catch (err) {
      throw asFetchError(err, signal, total, policy);
    }
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && status !== 304 && res.headers.location) {
      res.destroy();
      if (redirects >= MAX_AUDIO_URL_REDIRECTS) throw unreachable(`it redirects more than ${MAX_AUDIO_URL_REDIRECTS} times`);
      let next: URL;
      try {
        next = new URL(res.headers.location, url);
      } catch {
        throw unreachable('it redirects to an address that is not a URL');
      }
      url = checkedUrl(next, policy);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.destroy();
      throw unreachable(`the server answered HTTP ${status}`);
    }
    const length = Number(res.headers['content-length']);
    if (Number.isFinite(length) && length > opts.maxBytes) {
      res.destroy();
      throw tooLarge(opts.maxBytes);
    }
    const limited = new SizeLimit(opts.maxBytes);
    res.on('error', (err) => limited.destroy(asFetchError(err, signal, total, policy)));
    limited.on('error', () => res.destroy());
    res.pipe(limited);
    return { stream: limited, filename: filenameOf(url), contentType: String(res.headers['content-type'] ?? '').slice(0, 200) };
  }
}
