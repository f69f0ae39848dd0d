/**
 * How the pages show keys, connected apps, webhook deliveries, money, credits and times: one
 * place, so every page says a key's status, a date or an amount the same way.
 */
import { hasScope, READ_ONLY_SCOPES, webhookStateNameOf, type WebhookStateName } from '@murmur/contract';
import { billing, type auth, type transcription } from '@murmur/proto';

const DAY_MS = 86_400_000;
const dateFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone: 'UTC' });
const dateTimeFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** The expiry choices of a new key, as the form offers them (values are admin EXPIRY keys). */
export const EXPIRY_CHOICES = [
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days (recommended)' },
  { value: '365', label: '1 year' },
  { value: 'never', label: 'No expiration' },
] as const;
export const DEFAULT_EXPIRY = '90';

/** The access choices of a new key, as the form offers them (values name the scopes asked for). */
export const ACCESS_CHOICES = [
  { value: 'full', label: 'Full access (read, and AI calls that spend credits)', scopes: [] as string[] },
  { value: 'read', label: 'Read-only (no AI calls, no changes)', scopes: [...READ_ONLY_SCOPES] },
] as const;
export const DEFAULT_ACCESS = 'full';

/** "Full access" or "Read-only": how a key's scopes read in the list. */
export function accessOf(scopes: readonly string[]): string {
  return hasScope(scopes, 'ai') ? 'Full access' : 'Read-only';
}

export interface ShownTime {
  iso: string;
  text: string;
  title: string;
}

/** A time as `<time datetime title>text</time>` wants it: a date, and the exact UTC time on hover. */
export function shownDate(at: Date): ShownTime {
  return { iso: at.toISOString(), text: dateFormat.format(at), title: `${dateTimeFormat.format(at)} UTC` };
}

/** "3 minutes ago", "yesterday": for last use. */
export function ago(at: Date, now: Date): ShownTime {
  const seconds = Math.round((at.getTime() - now.getTime()) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60 ? 'just now'
    : abs < 3600 ? relative.format(Math.round(seconds / 60), 'minute')
    : abs < DAY_MS / 1000 ? relative.format(Math.round(seconds / 3600), 'hour')
    : relative.format(Math.round(seconds / 86400), 'day');
  return { iso: at.toISOString(), text, title: `${dateTimeFormat.format(at)} UTC` };
}

export type KeyStatus = 'active' | 'expiring' | 'expired' | 'revoked';

export interface ShownKey {
  id: string;
  name: string;
  hint: string;
  created: ShownTime;
  lastUsed: ShownTime | null;
  expires: ShownTime | null;
  status: KeyStatus;
  statusText: string;
  /** "Full access" or "Read-only". */
  access: string;
  /** Still callable, so it can be revoked. */
  revocable: boolean;
}

/** A key as the list shows it; "expiring" within 7 days. */
export function shownKey(k: auth.ApiKey, now: Date): ShownKey {
  const expiresAt = k.expiresAt ?? null;
  let status: KeyStatus = 'active';
  let statusText = 'Active';
  if (k.revokedAt) {
    status = 'revoked';
    statusText = `Revoked ${dateFormat.format(k.revokedAt)}`;
  } else if (expiresAt && expiresAt <= now) {
    status = 'expired';
    statusText = 'Expired';
  } else if (expiresAt && expiresAt.getTime() - now.getTime() < 7 * DAY_MS) {
    status = 'expiring';
    statusText = `Expires ${relative.format(Math.ceil((expiresAt.getTime() - now.getTime()) / DAY_MS), 'day')}`;
  }
  return {
    id: k.id,
    name: k.name,
    hint: k.hint,
    created: shownDate(k.createdAt ?? now),
    lastUsed: k.lastUsedAt ? ago(k.lastUsedAt, now) : null,
    expires: expiresAt ? shownDate(expiresAt) : null,
    status,
    statusText,
    access: accessOf(k.scopes),
    revocable: status === 'active' || status === 'expiring',
  };
}

export interface ShownConnection {
  id: string;
  name: string;
  /** The scopes granted, as the consent page named them: "read, ai". */
  scopes: string;
  connected: ShownTime;
  lastUsed: ShownTime | null;
}

/** An MCP client the user approved, as Connected apps lists it. */
export function shownConnection(c: auth.OAuthConnection, now: Date): ShownConnection {
  return {
    id: c.id,
    name: c.clientName || c.clientId,
    scopes: c.scopes.join(', '),
    connected: shownDate(c.createdAt ?? now),
    lastUsed: c.lastUsedAt ? ago(c.lastUsedAt, now) : null,
  };
}

/** Cents as dollars: "$12.34". */
export function dollars(cents: number): string {
  return new Intl.NumberFormat('en', { style: 'currency', currency: 'USD' }).format(cents / 100);
}

export function count(n: number): string {
  return new Intl.NumberFormat('en').format(n);
}

/** The name people know an AI call's kind by. */
export function operationName(op: billing.Operation): string {
  switch (op) {
    case billing.Operation.OPERATION_TRANSCRIBE:
      return 'Transcription';
    case billing.Operation.OPERATION_CONVERT:
      return 'Conversion';
    default:
      return 'AI call';
  }
}

/** The state filter of the Webhook deliveries page, as its form offers it ('' = all). */
export const DELIVERY_STATE_CHOICES = [
  { value: '', label: 'All' },
  { value: 'pending', label: 'Pending' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'failed', label: 'Failed' },
] as const;

const STATE_TEXT: Record<WebhookStateName, string> = { pending: 'Pending', delivered: 'Delivered', failed: 'Failed' };

/** An HTTP status as the deliveries page says it: the code, or "No answer" for 0. */
function answerOf(statusCode: number): string {
  return statusCode === 0 ? 'No answer' : String(statusCode);
}

export interface ShownAttempt {
  at: ShownTime;
  /** The round (each Resend starts one) and the attempt's number in it. */
  round: number;
  attempt: number;
  status: string;
  ok: boolean;
  latency: string;
  error: string;
}

export interface ShownDelivery {
  id: string;
  jobId: string;
  event: string;
  url: string;
  state: WebhookStateName;
  stateText: string;
  created: ShownTime;
  attemptCount: number;
  /** The last attempt's status code, "No answer", or "—" before the first. */
  lastStatus: string;
  nextAttempt: ShownTime | null;
  delivered: ShownTime | null;
  /** Newest first, as people read a log. */
  attempts: ShownAttempt[];
  /** It has ended (delivered, or every attempt of its round failed), so it can be sent again. */
  resendable: boolean;
}

/** A webhook delivery with its attempts, as the Webhook deliveries page lists it. */
export function shownDelivery(d: transcription.WebhookDeliveryRecord, now: Date): ShownDelivery {
  const state = webhookStateNameOf(d.state) ?? 'pending';
  return {
    id: d.id,
    jobId: d.jobId,
    event: d.event,
    url: d.url,
    state,
    stateText: STATE_TEXT[state],
    created: shownDate(d.createdAt ?? now),
    attemptCount: d.attemptCount,
    lastStatus: d.attemptCount > 0 ? answerOf(d.lastStatusCode) : '—',
    nextAttempt: state === 'pending' && d.nextAttemptAt ? shownDate(d.nextAttemptAt) : null,
    delivered: d.deliveredAt ? shownDate(d.deliveredAt) : null,
    attempts: [...d.attempts].reverse().map((a) => ({
      at: shownDate(a.startedAt ?? now),
      round: a.round,
      attempt: a.attempt,
      status: answerOf(a.statusCode),
      ok: a.statusCode >= 200 && a.statusCode < 300,
      latency: `${count(a.latencyMs)} ms`,
      error: a.error,
    })),
    resendable: state !== 'pending',
  };
}
