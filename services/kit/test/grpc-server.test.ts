import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import { auth } from '@murmur/proto';
import { MurmurError } from '@murmur/contract';
import { bindService, createClient, createLogger, currentContext, runWithContext, startGrpcServer, startMetricsServer, TokenMinter, type RunningGrpcServer } from '@murmur/kit';
import { sampleSum, scrape, testAccess, testMinter, testSigningKey } from '@murmur/kit/testing';

describe('gRPC server and client factories', () => {
  let running: RunningGrpcServer;
  let client: ReturnType<typeof createClient<auth.AuthServiceClient>>;
  const seenRequestIds: string[] = [];
  /** What the handler of a call meant to be cancelled saw: its signal's state when it looked. */
  let cancelled: { entered: () => void; look: Promise<void>; saw: (aborted: boolean, reason: unknown) => void } | undefined;

  beforeAll(async () => {
    const log = createLogger('kit-test', 'silent');
    running = await startGrpcServer(
      {
        name: 'test',
        access: testAccess('auth'),
        log,
        protoFiles: ['murmur/auth/v1/auth.proto'],
        services: [
          bindService(auth.AuthServiceService, {
            async verifyKey(req, ctx) {
              if (req.authorization === 'wait-for-cancel' && cancelled) {
                const watch = cancelled;
                if (req.resource === 'read-first') {
                  // The signal read while the call runs, aborted later by the cancel.
                  const signal = ctx.signal;
                  watch.entered();
                  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
                  watch.saw(signal.aborted, signal.reason);
                } else {
                  // The signal first read only after the cancel reached the server.
                  watch.entered();
                  await watch.look;
                  watch.saw(ctx.signal.aborted, ctx.signal.reason);
                }
                return { principal: undefined };
              }
              seenRequestIds.push(currentContext()?.requestId ?? '');
              if (req.authorization === 'typed') throw new MurmurError('expired_api_key');
              if (req.authorization === 'bug') throw new Error('secret internals: relation "keys" does not exist');
              return { principal: { userId: 'usr_1', keyId: 'key_1', keyExpiresAt: undefined, scopes: [], clientId: '' } };
            },
          }),
        ],
      },
      '127.0.0.1:0',
    );
    // The app's admin may call both RPCs this test serves (VerifyKey, ListUsers).
    client = createClient(auth.AuthServiceClient, `127.0.0.1:${running.port}`, { deadlineMs: 2000, identity: testMinter('app') });
  });

  afterAll(async () => {
    client.close();
    await running.shutdown(100);
  });

  it('answers a unary call and propagates the request id in metadata', async () => {
    const res = await runWithContext({ requestId: 'req_0123456789abcdef' }, () => client.verifyKey({ authorization: 'ok', resource: '' }));
    expect(res.principal?.userId).toBe('usr_1');
    expect(seenRequestIds).toContain('req_0123456789abcdef');
  });

  it('turns a typed domain error into its code on the client side', async () => {
    await expect(client.verifyKey({ authorization: 'typed', resource: '' })).rejects.toMatchObject({ code: 'expired_api_key' });
  });

  it('hides an unexpected error behind internal_error', async () => {
    const err = await client.verifyKey({ authorization: 'bug', resource: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MurmurError);
    expect((err as MurmurError).code).toBe('internal_error');
    expect((err as MurmurError).message).not.toContain('relation');
  });

  it('counts each call by method, status and contract error code, and times it (grpc-metrics.ts)', async () => {
    const metrics = await startMetricsServer('127.0.0.1:0');
    try {
      const read = () => scrape(`http://${metrics.address}/metrics`);
      const method = { grpc_service: 'murmur.auth.v1.AuthService', grpc_method: 'VerifyKey' };
      const before = await read();
      await client.verifyKey({ authorization: 'ok', resource: '' });
      await expect(client.verifyKey({ authorization: 'typed', resource: '' })).rejects.toMatchObject({ code: 'expired_api_key' });
      await expect(client.verifyKey({ authorization: 'bug', resource: '' })).rejects.toMatchObject({ code: 'internal_error' });
      const after = await read();
      const moved = (name: string, labels: Record<string, string>) => sampleSum(after, name, { ...method, ...labels }) - sampleSum(before, name, { ...method, ...labels });
      expect(moved('murmur_grpc_server_handled_total', { grpc_code: 'OK', error_code: '' })).toBe(1);
      expect(moved('murmur_grpc_server_handled_total', { grpc_code: 'UNAUTHENTICATED', error_code: 'expired_api_key' })).toBe(1);
      expect(moved('murmur_grpc_server_handled_total', { grpc_code: 'INTERNAL', error_code: 'internal_error' })).toBe(1);
      expect(moved('murmur_grpc_server_handling_seconds_count', {})).toBe(3);
      expect(sampleSum(after, 'murmur_grpc_server_handling_seconds_bucket', { ...method, le: '+Inf' })).toBe(sampleSum(after, 'murmur_grpc_server_handling_seconds_count', method));
    } finally {
      await metrics.stop();
    }
  });

  it('answers UNIMPLEMENTED for an RPC a later release implements', async () => {
    await expect(client.listUsers({ pageSize: 1, pageToken: '' })).rejects.toMatchObject({ code: 'internal_error' });
  });

  it('serves gRPC health checking for the whole server and the service', async () => {
    const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
    const hc = new Health(`127.0.0.1:${running.port}`, grpc.credentials.createInsecure()) as unknown as {
      check(req: { service: string }, cb: (e: Error | null, r: { status: string }) => void): void;
      close(): void;
    };
    for (const service of ['', 'murmur.auth.v1.AuthService']) {
      const res = await new Promise((resolve, reject) => hc.check({ service }, (e, r) => (e ? reject(e) : resolve(r))));
      expect(res).toEqual({ status: 'SERVING' });
    }
    hc.close();
  });

  it('serves server reflection, so grpcurl and generic clients can discover the service', async () => {
    const reflectionProto = require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(reflectionProto, { keepCase: true })) as any;
    const stub = new pkg.grpc.reflection.v1.ServerReflection(`127.0.0.1:${running.port}`, grpc.credentials.createInsecure());
    const ask = (request: object) =>
      new Promise<any>((resolve, reject) => {
        const call = stub.ServerReflectionInfo();
        call.on('data', (msg: unknown) => {
          resolve(msg);
          call.end();
        });
        call.on('error', reject);
        call.write(request);
      });
    const listed = await ask({ list_services: '' });
    const names = listed.list_services_response.service.map((s: { name: string }) => s.name);
    expect(names).toEqual(expect.arrayContaining(['murmur.auth.v1.AuthService', 'grpc.health.v1.Health']));
    const file = await ask({ file_containing_symbol: 'murmur.auth.v1.AuthService' });
    expect(file.file_descriptor_response.file_descriptor_proto.length).toBeGreaterThan(0);
    stub.close();
  });

  it('refuses a call without credentials before its handler runs', async () => {
    const anonymous = createClient(auth.AuthServiceClient, `127.0.0.1:${running.port}`, { deadlineMs: 2000 });
    const before = seenRequestIds.length;
    await expect(runWithContext({ requestId: 'req_anonymous000000001' }, () => anonymous.verifyKey({ authorization: 'ok', resource: '' }))).rejects.toMatchObject({ code: 'missing_api_key' });
    expect(seenRequestIds).toHaveLength(before);
    anonymous.close();
  });

  it("turns a refusal of the client's own workload credentials into an error to log, not the caller's 403", async () => {
    const gateway = createClient(auth.AuthServiceClient, `127.0.0.1:${running.port}`, { deadlineMs: 2000, identity: testMinter('gateway') });
    const err = await gateway.listUsers({ pageSize: 1, pageToken: '' }).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(MurmurError);
    expect(String((err as Error).message)).toMatch(/ListUsers refused this workload's credentials \(permission_denied\)/);
    gateway.close();
  });

  it('settles a call cancelled while its credentials are being minted as cancelled, not never', async () => {
    // A minter of its own: no token signed yet, so the call waits for one before it starts.
    const fresh = createClient(auth.AuthServiceClient, `127.0.0.1:${running.port}`, { deadlineMs: 2000, identity: new TokenMinter(testSigningKey('app'), ['admin']) });
    const controller = new AbortController();
    const call = fresh.verifyKey({ authorization: 'ok', resource: '' }, { signal: controller.signal });
    controller.abort(); // before the (async) token step let the call start
    const outcome = await call.then(
      () => 'answered',
      (e: MurmurError) => e.code,
    );
    // CANCELLED is, to the error model, a peer that did not answer: service_unavailable.
    expect(outcome).toBe('service_unavailable');
    fresh.close();
  });

  it.each(['read-first', 'read-after-cancel'])("aborts a handler's signal when the client cancels (%s)", async (when) => {
    let entered!: () => void;
    const handlerEntered = new Promise<void>((resolve) => (entered = resolve));
    let look!: () => void;
    const lookNow = new Promise<void>((resolve) => (look = resolve));
    const saw = new Promise<{ aborted: boolean; reason: unknown }>((resolve) => {
      cancelled = { entered, look: lookNow, saw: (aborted, reason) => resolve({ aborted, reason }) };
    });
    const controller = new AbortController();
    const call = client.verifyKey({ authorization: 'wait-for-cancel', resource: when }, { signal: controller.signal }).catch((e: unknown) => e);
    await handlerEntered;
    controller.abort();
    await call;
    // A call after it on the same connection: its frames follow the cancel's, so once it is
    // answered the server has handled the cancel.
    await client.verifyKey({ authorization: 'ok', resource: '' });
    look();
    const seen = await saw;
    cancelled = undefined;
    expect(seen.aborted).toBe(true);
    expect(String((seen.reason as Error).message)).toMatch(/cancelled by the client or its deadline passed/);
  });

  it('refuses to start a server with a method that has no access rule', async () => {
    await expect(
      startGrpcServer(
        {
          name: 'norule',
          access: testAccess('auth'),
          rules: (path) => (path.endsWith('/VerifyKey') ? { anyone: true } : undefined),
          log: createLogger('kit-test', 'silent'),
          protoFiles: ['murmur/auth/v1/auth.proto'],
          services: [bindService(auth.AuthServiceService, {})],
        },
        '127.0.0.1:0',
      ),
    ).rejects.toThrow(/\/murmur\.auth\.v1\.AuthService\/CreateUser has no access rule/);
  });

  it('maps a dead peer to service_unavailable', async () => {
    const dead = createClient(auth.AuthServiceClient, '127.0.0.1:1', { deadlineMs: 500 });
    await expect(dead.verifyKey({ authorization: 'x', resource: '' })).rejects.toMatchObject({ code: 'service_unavailable' });
    dead.close();
  });
});
