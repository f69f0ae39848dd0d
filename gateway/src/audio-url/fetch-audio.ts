/**
 * Audio by URL (`audio_url`), fetched by the gateway and streamed into the same pipeline as an
 * upload, safely:
 *  - `http`/`https` only, no credentials in the URL, ports 80/443 unless configured;
 *  - the host is resolved here, once; every address it resolves to must be public
 *    (public-address.ts) unless configured otherwise; the connection goes to the address that was
 *    checked (a pinned `lookup`: no second DNS query, so no rebinding between check and connect);
 *  - at most 5 redirects, each one checked again the same way;
 *  - connect, idle and total timeouts; the size limit enforced as the bytes arrive (and at once
 *    from a Content-Length over it).
 * Refusals are `audio_url_forbidden` (nothing was sent anywhere); failures to download are
 * `audio_url_unreachable`; too much audio is `audio_too_large`. The URL's query string is never
 * logged (it often carries a signature).
 */
import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { invalidParam, MurmurError, z } from '@murmur/kit';
import { nonPublicRange } from './public-address';

export const AUDIO_URL = 'audio_url';
export const MAX_AUDIO_URL_CHARS = 2048;
export const MAX_AUDIO_URL_REDIRECTS = 5;

/** Where an `audio_url` may point and how long its download may take. */
export interface AudioUrlPolicy {
  /** MURMUR_AUDIO_URL_ALLOW_PRIVATE: any address, private and loopback included (tests, on-premise). Off by default. */
  allowPrivate: boolean;
  /** MURMUR_AUDIO_URL_ALLOW_CIDRS: non-public ranges allowed anyway (an on-premise file server), e.g. 10.1.2.0/24. */
  allowCidrs: readonly string[];
  /** MURMUR_AUDIO_URL_PORTS: the ports a URL may name (default 80 and 443). */
  ports: readonly number[];
  /** Until the connection (TLS included) is up. */
  connectTimeoutMs: number;
  /** Longest silence while headers or audio are awaited. */
  idleTimeoutMs: number;
  /** The whole download, redirects included. */
  totalTimeoutMs: number;
}

export const DEFAULT_AUDIO_URL_POLICY: AudioUrlPolicy = {
  allowPrivate: false,
  allowCidrs: [],
  ports: [80, 443],
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  totalTimeoutMs: 30 * 60_000,
};

/** The gateway's settings of the policy (environment variables), checked at start. */
export const audioUrlConfigSchema = {
  MURMUR_AUDIO_URL_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  MURMUR_AUDIO_URL_ALLOW_CIDRS: z
    .string()
    .default('')
    .refine((v) => list(v).every((c) => ipaddr.isValidCIDR(c)), 'a comma-separated list of CIDR ranges, such as 10.1.2.0/24'),
  MURMUR_AUDIO_URL_PORTS: z
    .string()
    .default('80,443')
    .refine((v) => list(v).length > 0 && list(v).every((p) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535), 'a comma-separated list of ports'),
};

function list(v: string): string[] {
  return v.split(',').map((x) => x.trim()).filter(Boolean);
}

export function audioUrlPolicyOf(cfg: { MURMUR_AUDIO_URL_ALLOW_PRIVATE: 'true' | 'false'; MURMUR_AUDIO_URL_ALLOW_CIDRS: string; MURMUR_AUDIO_URL_PORTS: string }): AudioUrlPolicy {
  return {
    ...DEFAULT_AUDIO_URL_POLICY,
    allowPrivate: cfg.MURMUR_AUDIO_URL_ALLOW_PRIVATE === 'true',
    allowCidrs: list(cfg.MURMUR_AUDIO_URL_ALLOW_CIDRS),
    ports: list(cfg.MURMUR_AUDIO_URL_PORTS).map(Number),
  };
}

/** An audio file being downloaded: its bytes (the size limit enforced), name and type. */
export interface FetchedAudio {
  stream: Readable;
  filename: string;
  contentType: string;
}

type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

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

function checkedUrl(url: URL, policy: AudioUrlPolicy): URL {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw forbidden(`uses ${url.protocol.slice(0, 20)} (only https and http are fetched)`);
  if (url.username || url.password) throw forbidden('carries a user name or password (use a link that works without signing in)');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!policy.ports.includes(port)) throw forbidden(`names port ${port} (only ${policy.ports.join(' and ')} are fetched)`);
  return url;
}

function allowed(address: string, policy: AudioUrlPolicy): boolean {
  if (policy.allowPrivate || nonPublicRange(address) === null) return true;
  const ip = ipaddr.process(address);
  return policy.allowCidrs.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr);
    return range[0].kind() === ip.kind() && ip.match(range);
  });
}

/** The one address the request will connect to: resolved once, every answer checked. */
async function checkedAddress(url: URL, policy: AudioUrlPolicy, resolve: Resolve): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let answers: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    answers = [{ address: host, family: isIP(host) }];
  } else {
    try {
      answers = await resolve(host);
    } catch (err) {
      throw unreachable(`its host name does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
    if (answers.length === 0) throw unreachable('its host name does not resolve');
  }
  for (const a of answers) {
    if (!allowed(a.address, policy)) throw forbidden(`points to a ${nonPublicRange(a.address) ?? 'non-public'} address`);
  }
  return answers[0]!;
}

/** A lookup that answers only the address already checked. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as dns.LookupOptions).all) (callback as unknown as (err: null, all: dns.LookupAddress[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
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
    const target = await checkedAddress(url, policy, opts.resolve ?? systemResolve);
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
