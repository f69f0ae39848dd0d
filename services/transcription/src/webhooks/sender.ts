/**
 * One delivery attempt: a POST of the event to the endpoint under the kit's outbound rules (the
 * same as `audio_url`: public addresses only unless configured, one DNS answer, the connection
 * pinned to it), and https only — the event carries the transcript, and Standard Webhooks
 * signs but does not encrypt — unless the operator allows plain http (MURMUR_WEBHOOK_ALLOW_HTTP,
 * for a receiver on the developer's own machine) — within 10 s in all. Any 2xx is success; redirects are not followed (a 3xx is
 * a failure, as Standard Webhooks receivers are expected to answer directly). The answer's body
 * is not read beyond what arrives with it.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import { checkedAddress, checkOutboundUrl, isAllowedAddress, nonPublicRange, pinnedLookup, type OutboundPolicy, type Resolve } from '@murmur/kit';

export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface AttemptOutcome {
  ok: boolean;
  /** The HTTP status (0: none came). */
  status: number;
  /** Why it failed, for the job's delivery state (never the response body). */
  error: string;
}

class Refused extends Error {}

const ERRORS = {
  forbidden: (why: string) => new Refused(`the endpoint ${why}`),
  unreachable: (why: string) => new Refused(`the endpoint ${why}`),
};

/** Why a plain-http endpoint is refused (unless the operator allowed http: MURMUR_WEBHOOK_ALLOW_HTTP). */
const HTTPS_ONLY = 'must use https (plain http is refused: the event carries the transcript)';

/**
 * Checks an endpoint's form when a job names it (https unless `allowHttp`, port, credentials);
 * its address is checked at each attempt.
 */
export function checkEndpointForm(raw: string, policy: OutboundPolicy, allowHttp = false): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol === 'http:' && !allowHttp) return HTTPS_ONLY;
  try {
    checkOutboundUrl(url, policy, ERRORS);
  } catch (err) {
    return (err as Error).message.replace(/^the endpoint /, '');
  }
  // An address written in the URL is judged now; a name, at each attempt (its answers may change).
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) && !isAllowedAddress(host, policy)) return `points to a ${nonPublicRange(host) ?? 'non-public'} address`;
  return null;
}

export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  policy: OutboundPolicy,
  opts: { timeoutMs?: number; resolve?: Resolve; allowHttp?: boolean } = {},
): Promise<AttemptOutcome> {
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  let target: { address: string; family: number };
  let url: URL;
  try {
    url = checkOutboundUrl(new URL(rawUrl), policy, ERRORS);
    // An endpoint stored while http was allowed is not called in clear once it no longer is.
    if (url.protocol === 'http:' && !opts.allowHttp) throw ERRORS.forbidden(HTTPS_ONLY);
    target = await checkedAddress(url, policy, ERRORS, opts.resolve);
  } catch (err) {
    return { ok: false, status: 0, error: err instanceof Refused ? err.message : 'the endpoint is not a valid URL' };
  }
  return new Promise<AttemptOutcome>((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      agent: false,
      lookup: pinnedLookup(target.address, target.family),
      headers: { 'content-type': 'application/json', 'user-agent': 'Murmur-Webhooks/1', 'content-length': Buffer.byteLength(body), ...headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      res.destroy();
      const ok = status >= 200 && status < 300;
      resolve({ ok, status, error: ok ? '' : `the endpoint answered HTTP ${status}` });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
      resolve({ ok: false, status: 0, error: timedOut ? `no answer within ${timeoutMs / 1000} s` : `the connection failed (${err.code ?? err.message})` });
    });
    req.end(body);
  });
}
