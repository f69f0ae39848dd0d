/**
 * Clients identified by a URL (OAuth Client ID Metadata Documents, draft-ietf-oauth-client-id-
 * metadata-document; the MCP authorization spec's preferred registration): the `client_id` is an
 * https URL, and the document at that URL is the client's metadata. Nothing is registered; the
 * document is fetched when the client shows up, under the kit's outbound rules (the same
 * SSRF-safe fetching as `audio_url` and webhooks: public addresses only unless configured, one
 * DNS answer, the connection pinned to the address checked), within 5 s, at most 64 KB, no
 * redirects. A document is accepted only when it is JSON, names exactly its own URL as
 * `client_id`, lists redirect URIs and asks for no client secret — every client here is public.
 * Valid documents are kept in memory for 5 minutes (less when Cache-Control says so); a refused
 * one is not kept, so a fixed document works on the next try.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { OAuthClientMetadataSchema, type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { checkedAddress, checkOutboundUrl, pinnedLookup, type Logger, type OutboundPolicy, type Resolve } from '@murmur/kit';

export const CLIENT_METADATA_TIMEOUT_MS = 5_000;
export const CLIENT_METADATA_MAX_BYTES = 64 * 1024;
/** How long a valid document is kept (a shorter Cache-Control max-age wins). */
export const CLIENT_METADATA_CACHE_MS = 5 * 60_000;
/** Documents kept at most; the oldest go first. */
export const CLIENT_METADATA_CACHE_ENTRIES = 1_000;
const MAX_CLIENT_ID_CHARS = 2_048;

/** Where Client ID Metadata Documents may be fetched from: the kit's outbound rules. */
export type ClientMetadataPolicy = OutboundPolicy;

/** Why a document was not accepted (logged with the client id's host, never shown to the client). */
class Refused extends Error {}

const ERRORS = { forbidden: (why: string) => new Refused(`the URL ${why}`), unreachable: (why: string) => new Refused(`the URL ${why}`) };

/** Whether a client id is a URL, so names a metadata document rather than a registered client. */
export function isClientMetadataUrl(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

/**
 * The form the draft requires of a client id URL: https, a path, no credentials or fragment, and
 * written exactly as the URL parser writes it (no dot segments, no upper-case host, no default
 * port) — the id is compared as a string everywhere.
 */
export function clientIdUrl(clientId: string, policy: ClientMetadataPolicy): URL {
  if (clientId.length > MAX_CLIENT_ID_CHARS) throw new Refused(`is longer than ${MAX_CLIENT_ID_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new Refused('is not a URL');
  }
  if (url.href !== clientId) throw new Refused('is not in normal form');
  if (url.protocol !== 'https:') throw new Refused('is not https');
  if (url.hash || url.pathname === '/') throw new Refused('has a fragment or no path');
  return checkOutboundUrl(url, policy, ERRORS);
}

/** How long a response may be kept: Cache-Control's max-age when shorter; no-store or no-cache, not at all. */
export function cacheLifetimeMs(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? '').toLowerCase().split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((v) => v !== undefined);
  return maxAge === undefined ? CLIENT_METADATA_CACHE_MS : Math.min(CLIENT_METADATA_CACHE_MS, Number(maxAge) * 1000);
}

/** One GET of the document at the checked address: its parsed JSON and Cache-Control. */
function download(url: URL, target: { address: string; family: number }): Promise<{ json: unknown; cacheControl: string | undefined }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: pinnedLookup(target.address, target.family),
      headers: { accept: 'application/json', 'user-agent': 'Murmur-OAuth/1 (+client metadata)' },
    });
    const timer = setTimeout(() => req.destroy(new Refused(`did not answer within ${CLIENT_METADATA_TIMEOUT_MS / 1000} s`)), CLIENT_METADATA_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      req.destroy();
      reject(err instanceof Refused ? err : new Refused(`could not be fetched (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    };
    req.on('error', fail);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const type = String(res.headers['content-type'] ?? '').toLowerCase();
      if (status !== 200) return fail(new Refused(`answered HTTP ${status}`));
      if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/.test(type)) return fail(new Refused('did not answer JSON'));
      if (Number(res.headers['content-length']) > CLIENT_METADATA_MAX_BYTES) return fail(new Refused('answered a document over 64 KB'));
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > CLIENT_METADATA_MAX_BYTES) return fail(new Refused('answered a document over 64 KB'));
        chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        try {
          resolve({ json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown, cacheControl: res.headers['cache-control'] });
        } catch {
          reject(new Refused('answered JSON that does not parse'));
        }
      });
    });
    req.end();
  });
}

/** The client a document describes, or why it is refused. */
export function clientOfDocument(clientId: string, json: unknown): OAuthClientInformationFull {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Refused('answered JSON that is not an object');
  const doc = json as Record<string, unknown>;
  if (doc.client_id !== clientId) throw new Refused('answered a document whose client_id is not its URL');
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) throw new Refused('answered a document with a client secret');
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') throw new Refused('answered a document asking for client authentication');
  const parsed = OAuthClientMetadataSchema.safeParse(doc);
  if (!parsed.success) throw new Refused('answered a document that is not client metadata');
  if (parsed.data.redirect_uris.length === 0) throw new Refused('answered a document without redirect_uris');
  return { ...parsed.data, client_id: clientId, token_endpoint_auth_method: 'none' };
}

/** The documents of URL client ids: fetched under a policy, kept for a few minutes. */
export class ClientMetadataDocuments {
  private readonly cache = new Map<string, { client: OAuthClientInformationFull; until: number }>();
  private readonly pending = new Map<string, Promise<OAuthClientInformationFull | undefined>>();

  constructor(
    private readonly policy: ClientMetadataPolicy,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly resolve?: Resolve,
  ) {}

  /** The client of a URL client id, or undefined when its document cannot be had or is not acceptable. */
  async get(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    const kept = this.cache.get(clientId);
    if (kept && kept.until > this.now()) return kept.client;
    this.cache.delete(clientId);
    // Concurrent requests for one client (authorize, then token) share one fetch.
    const inFlight = this.pending.get(clientId);
    if (inFlight) return inFlight;
    const work = this.load(clientId).finally(() => this.pending.delete(clientId));
    this.pending.set(clientId, work);
    return work;
  }

  private async load(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    let host = '';
    try {
      const url = clientIdUrl(clientId, this.policy);
      host = url.host;
      const target = await checkedAddress(url, this.policy, ERRORS, this.resolve);
      const { json, cacheControl } = await download(url, target);
      const client = clientOfDocument(clientId, json);
      const lifetime = cacheLifetimeMs(cacheControl);
      if (lifetime > 0) {
        if (this.cache.size >= CLIENT_METADATA_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(clientId, { client, until: this.now() + lifetime });
      }
      return client;
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      // The host only: a client id is public, but its path or query is the client's business.
      this.log.info({ clientHost: host, why: err.message }, 'client metadata document refused');
      return undefined;
    }
  }
}
