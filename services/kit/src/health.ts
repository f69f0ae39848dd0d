/** Waiting for a peer to be ready: gRPC health checking (grpc.health.v1) and plain HTTP. */
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

interface HealthStub {
  check(req: { service: string }, opts: Partial<grpc.CallOptions>, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void): void;
  close(): void;
}

/** One health check; resolves to the serving status ("SERVING", "NOT_SERVING", …) or "UNREACHABLE". */
export async function checkGrpcHealth(address: string, service = '', timeoutMs = 1_000): Promise<string> {
  const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
  const stub = new Health(address, grpc.credentials.createInsecure()) as unknown as HealthStub;
  try {
    return await new Promise<string>((resolve) =>
      stub.check({ service }, { deadline: Date.now() + timeoutMs }, (err, res) => resolve(err ? 'UNREACHABLE' : res?.status ?? 'UNKNOWN')),
    );
  } finally {
    stub.close();
  }
}

/** Polls until `check` is true or `timeoutMs` passes (then throws naming `what`). */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 60_000, intervalMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function waitForGrpcServing(address: string, timeoutMs?: number): Promise<void> {
  return waitUntil(`gRPC health of ${address}`, async () => (await checkGrpcHealth(address)) === 'SERVING', timeoutMs);
}

export function waitForHttpOk(url: string, timeoutMs?: number): Promise<void> {
  return waitUntil(url, async () => (await fetch(url)).ok, timeoutMs);
}
