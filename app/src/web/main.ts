/**
 * The app's web server process (`npm start` runs it beside the services): Settings → Developer
 * and Usage on APP_PORT (8081), loopback unless APP_HOST says otherwise. It talks to auth,
 * billing and transcription over their internal RPCs with the app's admin workload identity.
 * Sign-in is the stand-in of session.ts: `npm run admin -- login --email E` prints a link.
 */
import type { AddressInfo } from 'node:net';
import { commonSchema, createLogger, EXIT_CANNOT_BIND, loadConfig, serviceAddressSchema, storageSchema } from '@murmur/kit';
import { closeClients, createClients } from '@murmur/gateway';
import { adminIdentity } from '../admin/identity';
import { appPublicUrl, appWebSchema } from './config';
import { createAppServer } from './server';
import { authSessions } from './session';

const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, ...commonSchema, ...appWebSchema });
const log = createLogger('app', cfg.LOG_LEVEL);
const clients = createClients(cfg, cfg.GRPC_DEADLINE_MS, adminIdentity(cfg));
const appUrl = appPublicUrl(cfg);
const app = createAppServer({
  clients,
  sessions: authSessions(clients),
  log,
  apiUrl: (cfg.PUBLIC_API_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, ''),
  secureCookies: appUrl.startsWith('https:'),
});
const server = app.listen(cfg.APP_PORT, cfg.APP_HOST);
server.on('listening', () => log.info({ address: `${cfg.APP_HOST}:${(server.address() as AddressInfo).port}`, url: appUrl }, 'app web server listening'));
server.on('error', (err: NodeJS.ErrnoException) => {
  log.error({ err: err.message }, 'app web server cannot listen');
  process.exit(err.code === 'EADDRINUSE' || err.code === 'EACCES' ? EXIT_CANNOT_BIND : 1);
});

function stop(): void {
  server.close(() => {
    closeClients(clients);
    process.exit(0);
  });
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
