/**
 * Checking that a webhook came from Murmur: Standard Webhooks signatures (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`, HMAC-SHA256 with your `whsec_…` secret), verified by
 * the `standardwebhooks` reference library — constant-time, with its five-minute tolerance for the
 * timestamp. Pass the raw body as received: a re-serialised JSON object does not verify.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { MurmurError } from './errors.js';

/** A delivery that does not verify: forged, altered, too old, or signed with another secret. */
export class WebhookSignatureError extends MurmurError {
  override readonly name = 'WebhookSignatureError';
}

/** What Murmur sends when a transcription job ends. */
export interface WebhookEvent<J = Record<string, unknown>> {
  type: 'transcription.completed' | 'transcription.failed' | 'transcription.canceled';
  timestamp: string;
  data: J;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((v, k) => (out[k.toLowerCase()] = v));
  else for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/**
 * The event of a delivery whose signature verifies; throws {@link WebhookSignatureError}
 * otherwise. `payload`: the raw body (string or bytes); `headers`: the request's.
 */
export function verifyWebhook<J = Record<string, unknown>>(payload: string | Uint8Array, headers: HeaderSource, secret: string): WebhookEvent<J> {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  try {
    return new Webhook(secret).verify(body, headerRecord(headers)) as WebhookEvent<J>;
  } catch (err) {
    if (err instanceof WebhookVerificationError) throw new WebhookSignatureError(`The webhook does not verify: ${err.message}.`);
    throw new WebhookSignatureError(`The webhook cannot be verified: ${(err as Error).message}.`);
  }
}
