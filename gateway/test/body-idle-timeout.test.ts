/**
 * The body idle timeout (http/body-idle-timeout.ts) on a real HTTP server and socket: a client
 * that stops sending is timed out; a pause of the gateway's own process — a GC, a busy machine,
 * here the event loop frozen on purpose for longer than the timeout — is not the client's
 * idleness: bytes that arrived meanwhile and wait unread keep the body alive.
 */
import * as http from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { watchBodyIdle } from '../src/http/body-idle-timeout';

const IDLE_MS = 200;

/** Blocks this process (its event loop and every timer) for `ms`, as a long GC pause does. */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('the body idle timeout', () => {
  let server: http.Server;
  let port = 0;
  /** The next request's watch: when its first body bytes were read, and how its body ended ('idle' or 'end'). */
  let next: { firstData: Promise<void>; outcome: Promise<'idle' | 'end'> };
  let arrive: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const sockets: Socket[] = [];

  /** Expects one request: watches its body as the gateway's routes do. */
  function expectRequest(): void {
    let firstData!: () => void;
    let outcome!: (o: 'idle' | 'end') => void;
    next = { firstData: new Promise((r) => (firstData = r)), outcome: new Promise((r) => (outcome = r)) };
    arrive = (req, res) => {
      watchBodyIdle(req, IDLE_MS, () => {
        outcome('idle');
        res.writeHead(408).end();
      });
      req.once('data', () => firstData());
      req.on('end', () => {
        outcome('end');
        res.writeHead(200).end();
      });
      req.resume();
    };
  }

  /** Opens a socket and sends the request head with `first`, the body's first bytes (of 100 declared). */
  async function send(first: string): Promise<Socket> {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n${first}`);
    return socket;
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => arrive(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('times out a client that stops sending', async () => {
    expectRequest();
    await send('x'.repeat(10));
    await next.firstData;
    expect(await next.outcome).toBe('idle');
  });

  it('keeps a body whose bytes waited unread through a freeze of the process longer than the timeout', async () => {
    expectRequest();
    const socket = await send('x'.repeat(50));
    await next.firstData;
    // The rest reaches the kernel at once (loopback), then the process stalls past the timeout.
    socket.write('y'.repeat(50));
    expect(socket.writableLength).toBe(0);
    freeze(3 * IDLE_MS);
    expect(await next.outcome).toBe('end');
  });
});
