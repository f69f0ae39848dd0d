/**
 * The process's metrics server: `GET /metrics` of the process registry (metrics.ts) in
 * Prometheus' text format, on a port of its own (MURMUR_METRICS_ADDR), never on the API's port —
 * so the public edge cannot reach it, and a scrape is not an API call (no auth, no request log,
 * no trace). Unset, the process serves no metrics. A port it cannot bind stops the start, naming
 * MURMUR_METRICS_ADDR (decision 0013).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenOn } from './bind-error';
import { z } from './config';
import { parseHostPort } from './host-port';
import type { Logger } from './log';
import { collectProcessMetrics, metricsRegistry } from './metrics';

/** The variable that says where a process serves its metrics. */
export const METRICS_ADDR_VARIABLE = 'MURMUR_METRICS_ADDR';

/** The path Prometheus scrapes. */
export const METRICS_PATH = '/metrics';

/** MURMUR_METRICS_ADDR: `host:port` (port 0 picks a free one); unset or empty, no metrics server. */
export const metricsSchema = {
  MURMUR_METRICS_ADDR: z
    .string()
    .refine((address) => parseHostPort(address) !== undefined, 'must be host:port, e.g. 127.0.0.1:9464 (or 0.0.0.0:9464 in a pod)')
    .optional(),
};

export interface MetricsServer {
  /** host:port it listens on, with the real port. */
  address: string;
  port: number;
  stop(): Promise<void>;
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== METRICS_PATH) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`Metrics are at ${METRICS_PATH}.\n`);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET only.\n');
    return;
  }
  const registry = metricsRegistry();
  registry
    .metrics()
    .then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
    })
    .catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics could not be collected: ${(err as Error).message}\n`);
    });
}

/** Serves the process registry at `address` (host:port), with the process metrics added. */
export async function startMetricsServer(address: string, log?: Logger): Promise<MetricsServer> {
  const where = parseHostPort(address);
  if (!where) throw new Error(`${METRICS_ADDR_VARIABLE} must be host:port, not ${address}`);
  collectProcessMetrics();
  const server = createServer(answer);
  // Prometheus keeps its connection between scrapes; a stop must not wait for it.
  server.keepAliveTimeout = 65_000;
  await listenOn(server, where.port, where.host, METRICS_ADDR_VARIABLE);
  const port = (server.address() as AddressInfo).port;
  const bound = `${where.host.includes(':') ? `[${where.host}]` : where.host}:${port}`;
  log?.info({ address: bound }, `metrics at http://${bound}${METRICS_PATH}`);
  return {
    address: bound,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The process's metrics server when MURMUR_METRICS_ADDR is set, else undefined. */
export async function serveMetricsIfConfigured(cfg: { MURMUR_METRICS_ADDR?: string | undefined }, log: Logger): Promise<MetricsServer | undefined> {
  return cfg.MURMUR_METRICS_ADDR ? startMetricsServer(cfg.MURMUR_METRICS_ADDR, log) : undefined;
}
