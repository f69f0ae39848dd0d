/**
 * One error path, also for bugs: an unexpected exception — here a real TypeError, from a gateway
 * wired without its library client, and from a gRPC handler — is answered internal_error on every
 * boundary (REST body, MCP isError result, gRPC INTERNAL), its message never sent, and logged
 * exactly once with its stack and the request id.
 */
import * as grpc from '@grpc/grpc-js';
import { auth } from '@murmur/proto';
import { bindService, createLogger, startGrpcServer, type Logger } from '@murmur/kit';
import { ManualClock, testAccess, testMinter } from '@murmur/kit/testing';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ServiceClients } from '@murmur/kit';
import { startGateway, startSystem, type TestGateway, type TestSystem } from './support/system';
import { callTool, connectMcp } from './support/mcp-client';

interface LogLine {
  level: string;
  msg: string;
  request_id?: string;
  err?: { message?: string; stack?: string };
  [key: string]: unknown;
}

/** A logger whose lines the test reads (createLogger's destination). */
function capturedLogger(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = createLogger('gateway', 'info', { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { log, lines };
}

/** The error lines logged since `from`: the test expects exactly one per bug. */
function errorsSince(lines: LogLine[], from: number): LogLine[] {
  return lines.slice(from).filter((l) => l.level === 'error');
}

describe('an unexpected exception', () => {
  let sys: TestSystem;
  let broken: TestGateway;
  let key: string;
  const { log, lines } = capturedLogger();

  beforeAll(async () => {
    sys = await startSystem();
    key = (await sys.newUser('bug@example.com')).key;
    // A wiring bug: the library client is missing, so reading recordings throws a TypeError.
    const clients = { ...sys.clients, library: undefined } as unknown as ServiceClients;
    broken = await startGateway(clients, log, new ManualClock(new Date()));
  });

  afterAll(async () => {
    await broken?.stop();
    await sys?.stop();
  });

  it('in a REST route is a 500 internal_error body, logged once with its stack and the request id', async () => {
    const from = lines.length;
    const res = await fetch(`${broken.baseUrl}/api/v1/recordings`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(res.status).toBe(500);
    expect(body.error).toMatchObject({ type: 'api_error', code: 'internal_error', request_id: res.headers.get('x-request-id') });
    expect(String(body.error.message)).not.toMatch(/undefined|listRecordings/);
    const logged = errorsSince(lines, from);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ request_id: res.headers.get('x-request-id'), path: '/api/v1/recordings' });
    expect(logged[0]!.err?.stack).toMatch(/^TypeError: .*listRecordings/);
  });

  it('in an MCP tool is an internal_error isError result, logged once with its stack and the request id', async () => {
    let client: Client | undefined;
    try {
      client = await connectMcp(broken.baseUrl, key);
      const from = lines.length;
      const res = await callTool(client, 'list_recordings');
      expect(res.isError).toBe(true);
      expect(res.data.error).toMatchObject({ type: 'api_error', code: 'internal_error', request_id: expect.stringMatching(/^req_/) });
      expect(String(res.data.error.message)).not.toMatch(/undefined|listRecordings/);
      const logged = errorsSince(lines, from);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ request_id: res.data.error.request_id, tool: 'list_recordings' });
      expect(logged[0]!.err?.stack).toMatch(/^TypeError: .*listRecordings/);
    } finally {
      await client?.close();
    }
  });

  it('in a gRPC handler is INTERNAL "internal error", logged once with its stack and the request id', async () => {
    const server = await startGrpcServer(
      {
        name: 'bug',
        access: testAccess('auth'),
        log,
        protoFiles: ['murmur/auth/v1/auth.proto'],
        services: [
          bindService(auth.AuthServiceService, {
            async verifyKey(req) {
              // A real bug: a field read from something that is not there.
              return (undefined as unknown as Record<string, auth.VerifyKeyResponse>)[req.authorization]!;
            },
          }),
        ],
      },
      '127.0.0.1:0',
    );
    const raw = new auth.AuthServiceClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    try {
      const from = lines.length;
      const metadata = new grpc.Metadata();
      metadata.set('x-request-id', 'req_bugbugbugbug0001');
      // The gateway's workload token: the call passes the access check and reaches the buggy handler.
      metadata.set('x-murmur-workload', await testMinter('gateway').workloadToken('auth'));
      const err = await new Promise<grpc.ServiceError>((resolve, reject) =>
        raw.verifyKey({ authorization: 'x', resource: '' }, metadata, (e) => (e ? resolve(e) : reject(new Error('the call succeeded')))),
      );
      expect(err.code).toBe(grpc.status.INTERNAL);
      expect(err.details).toBe('internal error');
      const logged = errorsSince(lines, from);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ request_id: 'req_bugbugbugbug0001', method: '/murmur.auth.v1.AuthService/VerifyKey' });
      expect(logged[0]!.err?.stack).toMatch(/^TypeError: /);
    } finally {
      raw.close();
      await server.shutdown(100);
    }
  });
});
