import { Client } from 'pg';
import { createClient } from 'redis';
import { startTestPostgres, startTestRedis, testPostgresUnavailable, testRedisUnavailable } from '../src/test-servers';
import { describeIfReal } from '../src/test-prerequisites';

const pgWhy = testPostgresUnavailable();
const redisWhy = testRedisUnavailable();

async function pgAnswers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ one: number }>('SELECT 1 AS one');
    return rows[0]?.one === 1;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describeIfReal(pgWhy, 'a Postgres of the test\'s own', () => {
  it('answers, is gone after kill, and answers again after start on the same port', async () => {
    const pg = await startTestPostgres();
    try {
      expect(pg.port).not.toBe(5432);
      expect(await pgAnswers(pg.url)).toBe(true);
      await pg.kill();
      expect(await pgAnswers(pg.url)).toBe(false);
      await pg.start();
      expect(await pgAnswers(pg.url)).toBe(true);
    } finally {
      await pg.drop();
    }
    expect(await pgAnswers(pg.url)).toBe(false);
  });
});

describeIfReal(redisWhy, 'a Redis of the test\'s own', () => {
  it('answers, is gone after kill, and answers again after start on the same port', async () => {
    const redis = await startTestRedis();
    const ping = async () => {
      const client = createClient({ url: redis.url, socket: { reconnectStrategy: false, connectTimeout: 1_000 } });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return await client.ping();
      } catch {
        return 'down';
      } finally {
        if (client.isOpen) await client.quit().catch(() => undefined);
      }
    };
    try {
      expect(redis.port).not.toBe(6379);
      expect(await ping()).toBe('PONG');
      await redis.kill();
      expect(await ping()).toBe('down');
      await redis.start();
      expect(await ping()).toBe('PONG');
    } finally {
      await redis.stop();
    }
    expect(await ping()).toBe('down');
  });
});
