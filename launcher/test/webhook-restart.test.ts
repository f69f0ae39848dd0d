/**
 * A webhook delivery survives a whole-system restart between its attempts: the stack runs as
 * child processes under the launcher's Supervisor (embedded Postgres per service, kept across
 * the restart); the receiver refuses the first attempt, the system is stopped before the next
 * one is due, the receiver comes back, the system starts again — and the next attempt arrives,
 * from the restarted processes, with the same webhook-id, signed so `standardwebhooks` verifies.
 * The wait between attempts is set to 20 s (MURMUR_WEBHOOK_RETRY_SECONDS) so the test need not
 * wait the standard 5 minutes for the third.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { admin } from '@murmur/app';
import { startProcessStack, type ProcessStack } from './support/process-stack';
import { eventually } from './support/eventually';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';

type Json = Record<string, any>;

describe('webhooks through a restart', () => {
  let stack: ProcessStack | undefined;
  let receiver: http.Server;
  const arrivals: Array<{ at: number; headers: Record<string, string>; body: string; status: number }> = [];
  let up = false;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const status = up ? 204 : 503;
        arrivals.push({ at: Date.now(), headers: req.headers as Record<string, string>, body, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await stack?.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('delivers the next attempt after the whole system was stopped and started again', async () => {
    const port = (receiver.address() as AddressInfo).port;
    stack = await startProcessStack({
      // A plain-http receiver on loopback, as an operator allows one for local development.
      env: { MURMUR_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', MURMUR_WEBHOOK_PORTS: `80,443,${port}`, MURMUR_WEBHOOK_ALLOW_HTTP: 'true', MURMUR_WEBHOOK_RETRY_SECONDS: '20,20,20,20,20,20,20' },
    });
    const email = 'hook-restart@example.com';
    const user = await admin.createUser(stack.clients, email, 'Hooks', 'pro');
    const key = (await admin.createKey(stack.clients, email, '90')).key;
    const { secret } = await stack.clients.transcription.rotateWebhookSecret({ userId: user.id });
    const form = new FormData();
    form.append('webhook_url', `http://127.0.0.1:${port}/hooks`);
    form.append('audio', new Blob([fs.readFileSync(WAV)], { type: 'audio/wav' }), 'speech.wav');
    const submitted = await fetch(`${stack.base}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as Json;
    const read = async () => (await (await fetch(`${stack!.base}/api/v1/transcriptions/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Json;

    const first = await eventually(read, (j) => j.webhook?.attempts === 1, 'the first attempt', 180_000, 200);
    expect(first.webhook).toMatchObject({ state: 'pending', last_status_code: 503 });
    // Down before the next attempt is due (20 s after the first).
    await stack.supervisor.stopAll(5_000);
    const stoppedAt = Date.now();
    expect(arrivals).toHaveLength(1);
    up = true;
    await stack.restart();

    const delivered = await eventually(read, (j) => j.webhook?.state === 'delivered', 'the delivery after the restart', 180_000, 200);
    expect(delivered.webhook).toMatchObject({ attempts: 2, last_status_code: 204, id: first.webhook.id });
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]!.at).toBeGreaterThan(stoppedAt);
    expect(arrivals.map((a) => a.headers['webhook-id'])).toEqual([first.webhook.id, first.webhook.id]);
    const event = new Webhook(secret).verify(arrivals[1]!.body, arrivals[1]!.headers) as Json;
    expect(event).toMatchObject({ type: 'transcription.completed', data: { id, status: 'completed' } });
    // Two stack starts, one transcription and a 20 s retry wait: slow machines need more than jest's default.
  }, 420_000);
});
