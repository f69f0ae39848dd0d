/**
 * The app's web server: Settings → Developer (with its Webhook deliveries), Usage and Logs for
 * signed-in people, and Record (live transcription from the microphone), over the services'
 * internal RPCs with the app's admin identity (like the admin CLI), every call naming the
 * signed-in user; and the OAuth 2.1 authorization server MCP clients connect through
 * (oauth/routes.ts). Pages are rendered on the server; the only scripts are our few small files
 * and Chart.js, all from this origin, under a strict Content-Security-Policy.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { DEFAULT_OUTBOUND_POLICY, DEFAULT_TRUSTED_PROXIES, type Logger, type ServiceClients, type TrustedProxies } from '@murmur/kit';
import { CSP_DIRECTIVES } from './content-security';
import { developerRoutes } from './developer-routes';
import type { ClientMetadataPolicy } from './oauth/client-metadata';
import { OAUTH_BODY_PATHS, oauthRoutes, unreadableOAuthBody } from './oauth/routes';
import { errorPage, message } from './pages';
import type { SessionSource } from './session';
import { signInRoutes } from './sign-in-routes';
import { recordRoutes } from './record-routes';
import { usageRoutes } from './usage-routes';
import { logsRoutes } from './logs-routes';
import { webhookDeliveriesRoutes } from './webhook-deliveries-routes';
import { CHART_JS_FILE, STATIC_DIR } from './views';

/** Largest form accepted: names and URLs only. */
export const MAX_FORM_BYTES = 16 * 1024;

export interface AppServerOptions {
  /** ServiceClients with the app's admin identity. */
  clients: ServiceClients;
  sessions: SessionSource;
  log: Logger;
  /** The public API's address, for the pages' examples; its /mcp is the resource OAuth tokens are for. */
  apiUrl: string;
  /** The app's public address (APP_PUBLIC_URL): the OAuth authorization server's issuer. */
  appUrl: string;
  /** Where Client ID Metadata Documents may be fetched from (MURMUR_CIMD_*); default public addresses only. */
  clientMetadataPolicy?: ClientMetadataPolicy;
  /** Served over TLS (directly or behind a proxy): Secure, `__Host-` cookies and HSTS. */
  secureCookies: boolean;
  /**
   * Which proxies' X-Forwarded-For to believe (MURMUR_TRUSTED_PROXIES, kit client-address.ts):
   * the client address the OAuth endpoints' rate limits are keyed by. Default loopback.
   */
  trustedProxies?: TrustedProxies;
  now?: () => Date;
}

export function createAppServer(opts: AppServerOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', opts.trustedProxies ?? DEFAULT_TRUSTED_PROXIES);
  app.use(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: CSP_DIRECTIVES,
      },
      frameguard: { action: 'deny' },
      // Same-origin only: the sign-in page's URL (its token) never leaves in a Referer, and our
      // own form posts keep their Origin header for the cross-site check.
      referrerPolicy: { policy: 'same-origin' },
      strictTransportSecurity: opts.secureCookies,
      crossOriginEmbedderPolicy: false,
    }),
  );
  // Requests are logged by method, path and status only: never a query (a sign-in token) or a body.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = Date.now();
    // Read now: routers mounted at a path (the OAuth endpoints') shorten it while they answer.
    const path = req.path;
    res.on('finish', () => opts.log.info({ method: req.method, path, status: res.statusCode, ms: Date.now() - started }, 'app request'));
    next();
  });
  app.get('/healthz', (_req, res) => void res.type('text').send('ok'));
  app.get('/static/chart.umd.min.js', (_req, res) => res.sendFile(CHART_JS_FILE, { maxAge: '1h' }));
  app.use('/static', express.static(STATIC_DIR, { maxAge: '10m', index: false }));
  // Pages: never cached, anywhere (they can show a key or secret once).
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  app.use(express.urlencoded({ extended: false, limit: MAX_FORM_BYTES, parameterLimit: 20 }));

  const emailCache = new Map<string, string>();
  const guard = {
    sessions: opts.sessions,
    secureCookies: opts.secureCookies,
    emailOf: async (userId: string) => {
      const known = emailCache.get(userId);
      if (known) return known;
      const { user } = await opts.clients.auth.getUser({ lookup: { $case: 'userId', value: userId } });
      const email = user?.email ?? '';
      if (emailCache.size > 10_000) emailCache.clear();
      emailCache.set(userId, email);
      return email;
    },
  };
  const now = opts.now ?? (() => new Date());
  app.get('/', (_req, res) => res.redirect(303, '/settings/developer'));
  app.use(signInRoutes(guard));
  app.use(
    oauthRoutes({
      ...guard,
      clients: opts.clients,
      issuer: opts.appUrl,
      apiUrl: opts.apiUrl,
      clientMetadataPolicy: opts.clientMetadataPolicy ?? DEFAULT_OUTBOUND_POLICY,
      log: opts.log,
      now,
    }),
  );
  app.use(developerRoutes({ ...guard, clients: opts.clients, apiUrl: opts.apiUrl, now }));
  app.use(webhookDeliveriesRoutes({ ...guard, clients: opts.clients, now }));
  app.use(usageRoutes({ ...guard, clients: opts.clients }));
  app.use(logsRoutes({ ...guard, clients: opts.clients, now }));
  app.use(recordRoutes({ ...guard, clients: opts.clients, apiUrl: opts.apiUrl }));
  app.use((_req: Request, res: Response) => message(res, 404, 'Page not found', ['There is nothing at this address.'], { link: { href: '/settings/developer', text: 'Go to Developer settings' } }));
  app.use(OAUTH_BODY_PATHS, unreadableOAuthBody);
  app.use(errorPage(opts.log));
  return app;
}
