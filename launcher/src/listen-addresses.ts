/**
 * The addresses `npm start` will listen on, tried before any process starts: a port another
 * program holds (often a previous `npm start`) is named at once with the variable to change,
 * instead of after every service has migrated its store. The processes still check for
 * themselves (a port can be taken in between) and exit EXIT_CANNOT_BIND.
 */
import { createServer } from 'node:net';
import { BindError, bindErrorMessage, listenOn } from '@murmur/kit';

export { parseHostPort } from '@murmur/kit';

export interface ListenAddress {
  /** The process that listens there: "gateway", "auth", … */
  name: string;
  /** The variable that sets it: PORT, AUTH_ADDR, … */
  variable: string;
  host: string;
  port: number;
}

/** The first address nothing may listen on now, with what to tell the person; undefined when all are free. */
export async function firstUnbindable(addresses: ListenAddress[]): Promise<{ address: ListenAddress; message: string } | undefined> {
  for (const address of addresses) {
    const probe = createServer();
    try {
      await listenOn(probe, address.port, address.host);
    } catch (err) {
      if (err instanceof BindError) return { address, message: `${address.name} ${bindErrorMessage(err, address.variable)}` };
      throw err;
    } finally {
      await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
    }
  }
  return undefined;
}
