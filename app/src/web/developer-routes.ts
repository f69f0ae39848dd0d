/**
 * Settings → Developer: the user's API keys (list, create with a name, an expiry and full or
 * read-only access and see it once, revoke after a confirmation), the MCP clients they connected over OAuth (Connected apps:
 * list, revoke after a confirmation), and their webhook signing secret and default endpoint.
 * Every call names the signed-in user, so another user's key or connection id is simply not found.
 */
import { Router, type Request, type Response } from 'express';
import { mcpResourceUrl, MurmurError } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';
import { EXPIRY } from '../admin/commands';
import { field, message, render, signedIn, signedInOf, type GuardOptions } from './pages';
import { ACCESS_CHOICES, accessOf, DEFAULT_ACCESS, DEFAULT_EXPIRY, EXPIRY_CHOICES, shownConnection, shownDate, shownKey } from './present';

export interface DeveloperPageOptions extends GuardOptions {
  clients: ServiceClients;
  apiUrl: string;
  now: () => Date;
}

interface DeveloperView {
  notice?: string;
  created?: { key: string; name: string; access: string };
  createError?: string;
  form?: { name: string; expires: string; access: string };
  webhookSecret?: string;
  endpointError?: string;
  endpointValue?: string;
}

const NOTICES: Record<string, string> = {
  'key-revoked': 'The key was revoked. Calls with it now fail with invalid_api_key.',
  'connection-revoked': "The app's access was revoked. Its tokens no longer work; to use it again, connect it again.",
  'endpoint-saved': 'The default endpoint was saved.',
  'endpoint-cleared': 'The default endpoint was cleared.',
};

export function developerRoutes(opts: DeveloperPageOptions): Router {
  const router = Router();
  const { clients } = opts;
  const guard = signedIn(opts, 'developer');

  async function show(req: Request, res: Response, status: number, view: DeveloperView): Promise<void> {
    const userId = signedInOf(res).userId;
    const now = opts.now();
    const [{ apiKeys }, { connections }, { settings }] = await Promise.all([
      clients.auth.listApiKeys({ userId }),
      clients.auth.listOAuthConnections({ userId }),
      clients.transcription.getWebhookSettings({ userId }),
    ]);
    const notice = view.notice ?? (typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined);
    render(res, status, 'developer', {
      title: 'Developer settings',
      apiUrl: opts.apiUrl,
      notice,
      created: view.created,
      createError: view.createError,
      form: view.form ?? { name: '', expires: DEFAULT_EXPIRY, access: DEFAULT_ACCESS },
      expiryChoices: EXPIRY_CHOICES,
      accessChoices: ACCESS_CHOICES,
      keys: apiKeys.map((k) => shownKey(k, now)),
      mcpUrl: mcpResourceUrl(opts.apiUrl),
      connections: connections.map((c) => shownConnection(c, now)),
      webhookSecret: view.webhookSecret,
      endpointError: view.endpointError,
      webhooks: {
        hasSecret: settings?.hasSecret ?? false,
        secretHint: settings?.secretHint ?? '',
        previousValidUntil: settings?.previousValidUntil && settings.previousValidUntil > now ? shownDate(settings.previousValidUntil) : null,
        defaultUrl: view.endpointValue ?? settings?.defaultUrl ?? '',
      },
    });
  }

  /** The user's key with this id, or a 404 page (another user's key is as unknown as a made-up id). */
  async function ownKey(res: Response, keyId: string) {
    const { apiKeys } = await clients.auth.listApiKeys({ userId: signedInOf(res).userId });
    return apiKeys.find((k) => k.id === keyId);
  }

  router.get('/settings/developer', guard, async (req, res) => show(req, res, 200, {}));

  router.post('/settings/developer/keys', guard, async (req, res) => {
    const name = field(req, 'name');
    const expires = field(req, 'expires') || DEFAULT_EXPIRY;
    const expiry = EXPIRY[expires];
    const access = ACCESS_CHOICES.find((c) => c.value === (field(req, 'access') || DEFAULT_ACCESS));
    if (expiry === undefined) return show(req, res, 400, { createError: 'Choose one of the offered expirations.', form: { name, expires: DEFAULT_EXPIRY, access: access?.value ?? DEFAULT_ACCESS } });
    if (!access) return show(req, res, 400, { createError: 'Choose one of the offered kinds of access.', form: { name, expires, access: DEFAULT_ACCESS } });
    try {
      const created = await clients.auth.createApiKey({ userId: signedInOf(res).userId, name, expiry, scopes: [...access.scopes] });
      await show(req, res, 201, { created: { key: created.key, name: created.apiKey?.name ?? name, access: accessOf(created.apiKey?.scopes ?? []) } });
    } catch (err) {
      if (!(err instanceof MurmurError && (err.code === 'invalid_request' || err.code === 'api_key_limit_reached'))) throw err;
      await show(req, res, err.httpStatus, { createError: err.message, form: { name, expires, access: access.value } });
    }
  });

  router.get('/settings/developer/keys/:id/revoke', guard, async (req, res) => {
    const key = await ownKey(res, String(req.params.id));
    if (!key || key.revokedAt) return void message(res, 404, 'No such key', ['This key does not exist, is not yours, or was already revoked.'], { link: { href: '/settings/developer', text: 'Back to Developer settings' } });
    render(res, 200, 'confirm', {
      title: `Revoke “${key.name}”?`,
      lines: [`Key ${key.hint} stops working at once: every program that uses it gets invalid_api_key on its next call. This cannot be undone.`],
      action: `/settings/developer/keys/${key.id}/revoke`,
      confirmText: 'Revoke key',
    });
  });

  router.post('/settings/developer/keys/:id/revoke', guard, async (req, res) => {
    try {
      await clients.auth.revokeApiKey({ keyId: String(req.params.id), userId: signedInOf(res).userId });
    } catch (err) {
      if (!(err instanceof MurmurError && (err.code === 'not_found' || err.code === 'invalid_request'))) throw err;
      return void message(res, 404, 'No such key', ['This key does not exist or is not yours. Nothing was revoked.'], { link: { href: '/settings/developer', text: 'Back to Developer settings' } });
    }
    res.redirect(303, '/settings/developer?notice=key-revoked');
  });

  const noSuchConnection = (res: Response, line: string) =>
    message(res, 404, 'No such connected app', [line], { link: { href: '/settings/developer', text: 'Back to Developer settings' } });

  router.get('/settings/developer/connections/:id/revoke', guard, async (req, res) => {
    const { connections } = await clients.auth.listOAuthConnections({ userId: signedInOf(res).userId });
    const connection = connections.find((c) => c.id === String(req.params.id));
    if (!connection) return void noSuchConnection(res, 'This app is not connected to your account, or its access was already revoked.');
    const name = connection.clientName || connection.clientId;
    render(res, 200, 'confirm', {
      title: `Revoke access of “${name}”?`,
      lines: [`${name} stops working with your account at once: its tokens are refused on its next call. To use it again, connect it again and approve it.`],
      action: `/settings/developer/connections/${connection.id}/revoke`,
      confirmText: 'Revoke access',
    });
  });

  router.post('/settings/developer/connections/:id/revoke', guard, async (req, res) => {
    try {
      await clients.auth.revokeOAuthConnection({ connectionId: String(req.params.id), userId: signedInOf(res).userId });
    } catch (err) {
      if (!(err instanceof MurmurError && (err.code === 'not_found' || err.code === 'invalid_request'))) throw err;
      return void noSuchConnection(res, 'This app is not connected to your account. Nothing was revoked.');
    }
    res.redirect(303, '/settings/developer?notice=connection-revoked');
  });

  router.get('/settings/developer/webhook-secret/rotate', guard, (_req, res) => {
    render(res, 200, 'confirm', {
      title: 'Rotate your webhook signing secret?',
      lines: [
        'A new secret is made and shown once. For the next 24 hours deliveries are signed with both the new and the old one, so you can update your receiver without losing any.',
        'After that, only the new secret verifies.',
      ],
      action: '/settings/developer/webhook-secret',
      confirmText: 'Rotate secret',
    });
  });

  router.post('/settings/developer/webhook-secret', guard, async (req, res) => {
    const { secret } = await clients.transcription.rotateWebhookSecret({ userId: signedInOf(res).userId });
    await show(req, res, 201, { webhookSecret: secret });
  });

  router.post('/settings/developer/webhook-endpoint', guard, async (req, res) => {
    const url = field(req, 'url').trim();
    try {
      await clients.transcription.setWebhookEndpoint({ userId: signedInOf(res).userId, url });
    } catch (err) {
      if (!(err instanceof MurmurError && err.code === 'invalid_request')) throw err;
      return show(req, res, 400, { endpointError: err.message, endpointValue: url });
    }
    res.redirect(303, `/settings/developer?notice=${url ? 'endpoint-saved' : 'endpoint-cleared'}`);
  });

  return router;
}
