/**
 * Billing on the embedded PGlite of the quick start. Its one session outlives the pool's
 * connections, so anything a connection leaves in the session (a named prepared statement) is
 * still there for the next one; reserve and commit must keep working when the pool has closed
 * its connection and opened another (it closes idle ones after 30 s).
 */
import * as path from 'node:path';
import { createLogger, openDatabase, type Database } from '@murmur/kit';
import { createPolicyClient, testAccess } from '@murmur/kit/testing';
import { billing } from '@murmur/proto';
import { MemoryRateLimiter, startBillingService, type RunningBillingService } from '../src/index';

const log = createLogger('billing-embedded-test', 'silent');

describe('billing on embedded PGlite', () => {
  let db: Database;
  let service: RunningBillingService;
  let api: ReturnType<typeof createPolicyClient<billing.BillingServiceClient>>;

  beforeAll(async () => {
    db = await openDatabase({ schema: 'billing', migrationsDir: path.resolve(__dirname, '../migrations') });
    service = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', rateLimiter: new MemoryRateLimiter(), sweepIntervalMs: 0 });
    api = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${service.port}`, { deadlineMs: 30_000 });
  }, 60_000);

  afterAll(async () => {
    api?.close();
    await service?.stop();
    await db?.close();
  });

  const pair = async (userId: string, key: string) => {
    const { reservation } = await api.reserve({
      userId, operation: billing.Operation.OPERATION_CONVERT, credits: 0, idempotencyKey: key, admissionId: '', audioSeconds: 0, transcriptChars: 1_500, holdSeconds: 0, requestFingerprint: 'fp',
    });
    const { reservation: committed } = await api.commit({ userId, reservationId: reservation!.id, credits: reservation!.credits, usageSeconds: 0, audioSeconds: 0 });
    return committed!;
  };

  it('reserves and commits before and after the pool replaces its connection', async () => {
    expect(db.embedded).toBe(true);
    const userId = 'usr_embeddedpglite01';
    await api.adjustCredits({ userId, monthlyCredits: 100, note: 'test' });
    expect((await pair(userId, 'k1')).state).toBe(billing.ReservationState.RESERVATION_STATE_COMMITTED);
    // The pool's one connection goes (as an idle one does after 30 s) and the next call opens another.
    const client = await db.pool.connect();
    client.release(true);
    expect((await pair(userId, 'k2')).state).toBe(billing.ReservationState.RESERVATION_STATE_COMMITTED);
    const { usage } = await api.getUsage({ userId });
    expect({ monthly: usage!.monthlyCreditsRemaining, reserved: usage!.creditsReserved }).toEqual({ monthly: 96, reserved: 0 });
  });
});
