/**
 * The app's web server process (`npm start` runs it beside the services): Settings → Developer
 * and Usage, and the OAuth authorization server of MCP clients (issuer APP_PUBLIC_URL), on
 * APP_PORT (8081), loopback unless APP_HOST says otherwise. It talks to auth, billing and
 * transcription over their internal RPCs with the app's admin workload identity. Sign-in is the
 * stand-in of session.ts: `npm run admin -- login --email E` prints a link.
 */
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { closeServiceClients, commonSchema, createLogger, createServiceClients, EXIT_CANNOT_BIND, exitStartFailure, loadConfig, serviceAddressSchema, storageSchema, trustedProxiesSchema } from '@murmur/kit';
import { adminIdentity } from '../admin/identity';
import { appPublicUrl, appWebSchema, clientMetadataPolicyOf, clientMetadataSchema, publicApiUrl } from './config';
import { createAppServer } from './server';
import { authSessions } from './session';

const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, ...commonSchema, ...appWebSchema, ...clientMetadataSchema, ...trustedProxiesSchema });
const log = createLogger('app', cfg.LOG_LEVEL);
const clients = createServiceClients(cfg, { deadlineMs: cfg.GRPC_DEADLINE_MS, identity: adminIdentity(cfg) });
const appUrl = appPublicUrl(cfg);
let app: Express;
try {
  app = createAppServer({
    clients,
    sessions: authSessions(clients),
    log,
    apiUrl: publicApiUrl(cfg),
    appUrl,
    clientMetadataPolicy: clientMetadataPolicyOf(cfg),
    secureCookies: appUrl.startsWith('https:'),
    trustedProxies: cfg.MURMUR_TRUSTED_PROXIES,
  });
} catch (err) {
  exitStartFailure('app', err, 'APP_PORT');
}
const server = app.listen(cfg.APP_PORT, cfg.APP_HOST);
server.on('listening', () => log.info({ address: `${cfg.APP_HOST}:${(server.address() as AddressInfo).port}`, url: appUrl }, 'app web server listening'));
server.on('error', (err: NodeJS.ErrnoException) => {
  log.error({ err: err.message }, 'app web server cannot listen');
  process.exit(err.code === 'EADDRINUSE' || err.code === 'EACCES' ? EXIT_CANNOT_BIND : 1);
});

function stop(): void {
  server.close(() => {
    closeServiceClients(clients);
    process.exit(0);
  });
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
