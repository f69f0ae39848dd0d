/**
 * Where each process of `npm start` serves its metrics (docs/operations.md#metrics): off unless
 * MURMUR_METRICS_PORT is set; then consecutive loopback ports from it, one per process in the
 * order of METRICS_PROCESSES, each handed to its process as MURMUR_METRICS_ADDR. A process that
 * serves none is handed an empty MURMUR_METRICS_ADDR, so a value in the launcher's own
 * environment never reaches every child at once (they would all ask for the same port).
 */
import type { ListenAddress } from './listen-addresses';

/** The launcher's variable: the first metrics port; unset, no process serves metrics. */
export const METRICS_PORT_VARIABLE = 'MURMUR_METRICS_PORT';

/** Metrics stay on this machine under `npm start`: operators' numbers, not the API's. */
export const METRICS_HOST = '127.0.0.1';

/** The processes with metrics, in port order (the app's pages serve none: the chart does not deploy them). */
export const METRICS_PROCESSES = ['gateway', 'auth', 'billing', 'library', 'transcription', 'conversion'] as const;

/** Each process's metrics address, from `firstPort`; empty when metrics are off. */
export function metricsAddresses(firstPort: number | undefined): ListenAddress[] {
  if (firstPort === undefined) return [];
  return METRICS_PROCESSES.map((name, i) => ({ name, variable: METRICS_PORT_VARIABLE, host: METRICS_HOST, port: firstPort + i }));
}

/** The MURMUR_METRICS_ADDR a child gets: its address, or empty (none). */
export function metricsEnv(addresses: readonly ListenAddress[], name: string): { MURMUR_METRICS_ADDR: string } {
  const mine = addresses.find((a) => a.name === name);
  return { MURMUR_METRICS_ADDR: mine ? `${mine.host}:${mine.port}` : '' };
}

/** The one line `npm start` prints about metrics once up, or undefined when they are off. */
export function metricsLine(addresses: readonly ListenAddress[]): string | undefined {
  if (addresses.length === 0) return undefined;
  const [first, ...rest] = addresses;
  return `Metrics (Prometheus): ${first!.name} http://${first!.host}:${first!.port}/metrics, ${rest.map((a) => `${a.name} :${a.port}`).join(', ')}.`;
}
