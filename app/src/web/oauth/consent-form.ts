/**
 * The pending authorization request, carried by the consent form's hidden fields from the page
 * to the person's answer. Nothing is stored between the two: the fields carry a MAC
 * (HMAC-SHA256 keyed by the session token, like the CSRF token, over every field and the time the
 * page was made), so a field changed in the browser, a form made for another session, or one
 * older than 10 minutes is refused before anything is looked at.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isOAuthScope, type OAuthScope } from '@murmur/contract';

/** How long a consent page may be answered. */
export const CONSENT_TTL_MS = 10 * 60_000;

/** What the person is asked to approve. */
export interface PendingAuthorization {
  clientId: string;
  /** The name the page showed, recorded with the connection. */
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: OAuthScope[];
  resource: string;
  /** The client's `state` ('' when it sent none). */
  state: string;
  /** When the page was made (ms since the epoch). */
  issuedAt: number;
}

/** The hidden fields, in the order they are signed. */
const FIELDS = ['client_id', 'client_name', 'redirect_uri', 'code_challenge', 'scope', 'resource', 'state', 'issued_at'] as const;
type Field = (typeof FIELDS)[number];

function valuesOf(p: PendingAuthorization): Record<Field, string> {
  return {
    client_id: p.clientId,
    client_name: p.clientName,
    redirect_uri: p.redirectUri,
    code_challenge: p.codeChallenge,
    scope: p.scopes.join(' '),
    resource: p.resource,
    state: p.state,
    issued_at: String(p.issuedAt),
  };
}

function macOf(values: Record<Field, string>, sessionToken: string): string {
  return createHmac('sha256', sessionToken)
    .update('murmur-oauth-consent')
    .update(JSON.stringify(FIELDS.map((f) => values[f])))
    .digest('base64url');
}

/** The form's hidden fields (name → value), the MAC included. */
export function consentFields(p: PendingAuthorization, sessionToken: string): Array<{ name: string; value: string }> {
  const values = valuesOf(p);
  return [...FIELDS.map((name) => ({ name, value: values[name] })), { name: 'mac', value: macOf(values, sessionToken) }];
}

export type ConsentAnswer = { ok: true; pending: PendingAuthorization } | { ok: false; why: 'tampered' | 'expired' };

/** The pending request of a posted form, if its MAC is this session's and it is recent enough. */
export function pendingOf(body: unknown, sessionToken: string, now: number): ConsentAnswer {
  const form = (body ?? {}) as Record<string, unknown>;
  const values = {} as Record<Field, string>;
  for (const f of FIELDS) {
    const v = form[f];
    if (typeof v !== 'string') return { ok: false, why: 'tampered' };
    values[f] = v;
  }
  const sent = form.mac;
  const expected = Buffer.from(macOf(values, sessionToken));
  if (typeof sent !== 'string' || Buffer.byteLength(sent) !== expected.length || !timingSafeEqual(Buffer.from(sent), expected)) return { ok: false, why: 'tampered' };
  const issuedAt = Number(values.issued_at);
  if (!Number.isSafeInteger(issuedAt) || now - issuedAt > CONSENT_TTL_MS || issuedAt > now + 60_000) return { ok: false, why: 'expired' };
  const scopes = values.scope.split(' ').filter(isOAuthScope);
  return {
    ok: true,
    pending: {
      clientId: values.client_id,
      clientName: values.client_name,
      redirectUri: values.redirect_uri,
      codeChallenge: values.code_challenge,
      scopes,
      resource: values.resource,
      state: values.state,
      issuedAt,
    },
  };
}
