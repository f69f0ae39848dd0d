/**
 * Settings → Developer → Webhook deliveries: every event sent to the user's endpoints, newest
 * first, with each attempt (time, response code, latency, why it failed), filtered by state and
 * paged (transcription ListWebhookDeliveries), and a Resend button on each delivery that has
 * ended, which starts a new round of attempts now (RetryWebhook, the same call as the public
 * `POST /transcriptions/{id}/webhook/retry`, under the same per-user cap).
 */
import { Router, type Request, type Response } from 'express';
import { isId, MurmurError, WEBHOOK_RETRY_LIMIT, WEBHOOK_STATES, type WebhookStateName } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';
import { transcription } from '@murmur/proto';
import { field, message, render, signedIn, signedInOf, type GuardOptions } from './pages';
import { DELIVERY_STATE_CHOICES, shownDelivery } from './present';

/** Deliveries on one page. */
export const DELIVERIES_PER_PAGE = 20;

const PAGE = '/settings/developer/webhooks';

export interface WebhookDeliveriesPageOptions extends GuardOptions {
  clients: ServiceClients;
  now: () => Date;
}

interface DeliveriesView {
  notice?: string;
  resendError?: string;
}

/** The state filter a request names ('' = all; anything else offered nowhere counts as all). */
function stateOf(value: unknown): WebhookStateName | '' {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(WEBHOOK_STATES, value) ? (value as WebhookStateName) : '';
}

/** The page's address with `state` and whatever else is given. */
function pageUrl(state: string, more: Record<string, string> = {}): string {
  const query = new URLSearchParams({ ...(state ? { state } : {}), ...more }).toString();
  return query ? `${PAGE}?${query}` : PAGE;
}

/** What the rate limit's refusal says on the page: how many a minute, and when to try again. */
function tooManyResends(err: MurmurError): string {
  const seconds = Number(err.meta.retry_after);
  const when = Number.isFinite(seconds) && seconds > 0 ? `in ${seconds} second${seconds === 1 ? '' : 's'}` : 'in a minute';
  return `You can resend at most ${WEBHOOK_RETRY_LIMIT.limit} deliveries a minute, and have reached that. Try again ${when}; nothing was sent this time.`;
}

export function webhookDeliveriesRoutes(opts: WebhookDeliveriesPageOptions): Router {
  const router = Router();
  const guard = signedIn(opts, 'developer');

  async function show(req: Request, res: Response, status: number, view: DeliveriesView): Promise<void> {
    const userId = signedInOf(res).userId;
    const state = stateOf(req.query.state ?? field(req, 'state'));
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : '';
    let page: transcription.ListWebhookDeliveriesResponse;
    try {
      page = await opts.clients.transcription.listWebhookDeliveries(
        transcription.ListWebhookDeliveriesRequest.fromPartial({ ownerId: userId, limit: DELIVERIES_PER_PAGE, cursor, state: state ? WEBHOOK_STATES[state] : undefined }),
      );
    } catch (err) {
      if (!(err instanceof MurmurError && err.code === 'invalid_request')) throw err;
      return void message(res, 400, 'This page of deliveries is no longer valid', ['The link was changed or belongs to another filter. Start again from the first page.'], {
        link: { href: pageUrl(state), text: 'First page of deliveries' },
      });
    }
    const now = opts.now();
    const job = typeof req.query.job === 'string' && isId('trn', req.query.job) ? req.query.job : '';
    const notice = view.notice ?? (req.query.notice === 'resent' && job ? `The event of ${job} is being sent again now: a new round of attempts started, and each shows up below as it is made (reload to see it).` : undefined);
    render(res, status, 'webhook-deliveries', {
      title: 'Webhook deliveries',
      notice,
      resendError: view.resendError,
      state,
      stateChoices: DELIVERY_STATE_CHOICES,
      deliveries: page.deliveries.map((d) => shownDelivery(d, now)),
      firstPage: cursor ? pageUrl(state) : '',
      nextPage: page.hasMore ? pageUrl(state, { cursor: page.nextCursor }) : '',
    });
  }

  router.get(PAGE, guard, async (req, res) => show(req, res, 200, {}));

  router.post(`${PAGE}/:jobId/resend`, guard, async (req, res) => {
    const jobId = String(req.params.jobId);
    const state = stateOf(field(req, 'state'));
    try {
      await opts.clients.transcription.retryWebhook({ ownerId: signedInOf(res).userId, id: jobId });
    } catch (err) {
      if (err instanceof MurmurError && err.code === 'rate_limit_exceeded') {
        res.set('Retry-After', String(err.meta.retry_after ?? WEBHOOK_RETRY_LIMIT.windowSeconds));
        return show(req, res, 429, { resendError: tooManyResends(err) });
      }
      if (err instanceof MurmurError && (err.code === 'not_found' || err.code === 'invalid_request')) {
        return void message(res, 404, 'No such delivery', ['This delivery does not exist, is not yours, or cannot be sent again yet. Nothing was sent.'], {
          link: { href: pageUrl(state), text: 'Back to Webhook deliveries' },
        });
      }
      throw err;
    }
    res.redirect(303, pageUrl(state, { notice: 'resent', job: jobId }));
  });

  return router;
}
