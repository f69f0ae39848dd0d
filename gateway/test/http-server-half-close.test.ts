/**
 * A client that half-closes its side (a FIN after its request, as `nc -N` does) and the
 * gateway's HTTP server (http/server.ts), with a bare listener in place of the app: the request is
 * answered when the answer comes within the grace; one still unanswered then is abandoned (its
 * response closes and its work stops, as for a client that resets); a response already under way
 * (a stream) stops at once — a FIN then is a client that left (issue 30).
 */
import { once } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/server';

/** Writes `request`, ends the client's side at once, and resolves with every byte the server sent before it closed. */
function halfClosed(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.end('GET /work HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

describe('a client that half-closes after its request', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** A server whose listener is `handle`; its port. */
  async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void, halfClosedAnswerMs: number): Promise<number> {
    server = createHttpServer(handle, undefined, { halfClosedAnswerMs });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  it('gets the answer that comes within the grace, then the connection closes', async () => {
    const port = await serve((_req, res) => void setTimeout(() => res.end('done'), 50), 60_000);
    const answer = await halfClosed(port);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer.endsWith('done')).toBe(true);
  });

  it('is abandoned when no answer has begun within the grace: the response closes unanswered', async () => {
    let closed!: (finished: boolean) => void;
    const responseClosed = new Promise<boolean>((resolve) => (closed = resolve));
    const port = await serve((_req, res) => res.on('close', () => closed(res.writableFinished)), 100);
    expect(await halfClosed(port)).toBe('');
    expect(await responseClosed).toBe(false);
  });

  it('stops a response under way (a stream) at once: the client has left', async () => {
    let closed!: () => void;
    const responseClosed = new Promise<void>((resolve) => (closed = resolve));
    // A grace far beyond the test's timeout: only the stream rule can end it.
    const port = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': started\n\n');
      res.on('close', () => closed());
    }, 600_000);
    const answer = await halfClosed(port);
    await responseClosed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*: started/);
  });
});
