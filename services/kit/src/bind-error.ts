/**
 * A port a process cannot listen on. Restarting cannot fix it (another program holds the port, or
 * the address is not this machine's), so the process says which variable to change and exits
 * with EXIT_CANNOT_BIND, which tells a supervisor (the launcher, Kubernetes' CrashLoopBackOff
 * aside) to stop instead of restarting it forever.
 */
import type { Server } from 'node:net';

/** sysexits' EX_CONFIG: a configuration error, not a crash worth a restart. */
export const EXIT_CANNOT_BIND = 78;

/** Listening on `address` failed; `cause` is the system error (EADDRINUSE, EACCES, …). */
export class BindError extends Error {
  constructor(
    readonly address: string,
    cause: unknown,
    /** The variable that set `address`, when it is not the process's main one (MURMUR_METRICS_ADDR). */
    readonly variable?: string,
  ) {
    super(`cannot listen on ${address}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'BindError';
  }
}

/** What to tell a person whose process could not listen on `address`, set by `variable`. */
export function bindErrorMessage(err: BindError, variable: string): string {
  const detail = err.cause instanceof Error ? `${(err.cause as NodeJS.ErrnoException).code ?? ''} ${err.cause.message}` : String(err.cause);
  if (/EADDRINUSE/.test(detail)) {
    return `cannot listen on ${err.address}: the port is already in use by another program. Stop that program or set ${variable} to a free port.`;
  }
  if (/EACCES/.test(detail)) {
    return `cannot listen on ${err.address}: permission denied (ports below 1024 need privileges). Set ${variable} to a port above 1023.`;
  }
  if (/EADDRNOTAVAIL/.test(detail)) {
    return `cannot listen on ${err.address}: that address is not one of this machine's. Set ${variable} to a local address.`;
  }
  return `cannot listen on ${err.address} (set by ${variable}): ${detail.trim()}`;
}

/**
 * Ends a process whose start failed with one readable line: a port it cannot bind names the
 * variable to change and exits EXIT_CANNOT_BIND; anything else exits 1.
 */
export function exitStartFailure(name: string, err: unknown, addressVariable: string): never {
  if (err instanceof BindError) {
    process.stderr.write(`${name} failed to start: ${bindErrorMessage(err, err.variable ?? addressVariable)}\n`);
    process.exit(EXIT_CANNOT_BIND);
  }
  process.stderr.write(`${name} failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

/**
 * `server.listen` (HTTP or plain TCP) as a promise that rejects with a BindError instead of an
 * unheard 'error' event; `variable` names the setting when it is not the process's main address.
 */
export function listenOn(server: Server, port: number, host: string, variable?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => reject(new BindError(`${host}:${port}`, err, variable));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
