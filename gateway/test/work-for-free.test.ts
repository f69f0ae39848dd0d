/**
 * Tries, as an attacker with an ordinary key would, to get paid work for free through every paid
 * route (issue #30): an Idempotency-Key the gateway never saw but billing holds (a completed
 * job's id) on POST /transcribe and POST /convert; a conversion past the plan's size cap under
 * such a key; a job resubmitted under its own id. Every attempt is refused and charges nothing;
 * the honest calls beside them are charged exactly once. (Redis restarting empty:
 * faults-redis.test.ts; direct gRPC: the services' own tests; decoded audio: jobs-pay-for-decoded-audio.)
 */
import { readFileSync } from 'node:fs';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

describe('paid work is never free', () => {
  let sys: TestSystem;
  const audio = readFileSync(WAV);

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  async function post(path: string, key: string, body: FormData | Json, headers: Record<string, string> = {}) {
    const json = !(body instanceof FormData);
    const res = await fetch(`${sys.baseUrl}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
      body: json ? JSON.stringify(body) : body,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  }
  const form = () => {
    const f = new FormData();
    f.append('audio', new Blob([audio], { type: 'audio/wav' }), 'speech.wav');
    return f;
  };
  const usage = async (key: string) => {
    const u = (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;
    return { remaining: u.credits.monthly_remaining, used: u.counters.credits_used, reserved: u.credits.reserved, slots: u.rate_limit.remaining };
  };
  async function completedJob(key: string): Promise<string> {
    const { body } = await post('/transcriptions', key, form());
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const job = (await get(sys.baseUrl, `/api/v1/transcriptions/${body.id}`, key)).body as Json;
      if (job.status === 'completed') return job.id as string;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('the job did not complete');
  }

  /** A recording of the user's to ask about (POST /ask charges only when a passage matches). */
  async function notes(userId: string): Promise<void> {
    await sys.admin.library.createRecording({
      ownerId: userId, recordingId: '', title: 'Ship date', folderId: '', durationSeconds: 4, createdAt: undefined,
      transcript: { text: 'We agreed to ship on Friday.', language: 'en', segments: [{ startSeconds: 0, endSeconds: 4, text: 'We agreed to ship on Friday.' }], timeline: undefined },
    });
  }

  it("refuses a completed job's id as the Idempotency-Key of POST /transcribe, POST /convert and POST /ask (409), charging and admitting nothing", async () => {
    const { key, user } = await sys.newUser('free-job-key@example.com');
    await notes(user.id);
    const jobId = await completedJob(key);
    const before = await usage(key);
    expect(before.used).toBe(1);

    const transcribe = await post('/transcribe', key, form(), { 'idempotency-key': jobId });
    // Named as REST names the key: its header.
    expect([transcribe.status, transcribe.body.error?.code, transcribe.body.error?.param]).toEqual([409, 'idempotency_conflict', 'Idempotency-Key']);
    // 150,000 characters (150 credits' worth on the Free plan, under its 200,000 cap).
    const convert = await post('/convert', key, { transcript: 'We agreed to ship on Friday. '.repeat(5_200), kind: 'summary' }, { 'idempotency-key': jobId });
    expect([convert.status, convert.body.error?.code]).toEqual([409, 'idempotency_conflict']);
    // Over the Free plan's 200,000-character cap: the cap is checked whatever the key.
    const tooLong = await post('/convert', key, { transcript: 'x'.repeat(300_000), kind: 'summary' }, { 'idempotency-key': jobId });
    expect([tooLong.status, tooLong.body.error?.param]).toEqual([400, 'transcript']);
    const ask = await post('/ask', key, { question: 'When do we ship?' }, { 'idempotency-key': jobId });
    expect([ask.status, ask.body.error?.code]).toEqual([409, 'idempotency_conflict']);

    const after = await usage(key);
    expect({ remaining: after.remaining, used: after.used, reserved: after.reserved }).toEqual({ remaining: before.remaining, used: 1, reserved: 0 });
  });

  it('charges the honest calls beside them once each: a keyed transcription replayed by the gateway, a keyed conversion, a keyed question replayed', async () => {
    const { key, user } = await sys.newUser('free-honest@example.com');
    await notes(user.id);
    const first = await post('/transcribe', key, form(), { 'idempotency-key': 'honest-1' });
    const again = await post('/transcribe', key, form(), { 'idempotency-key': 'honest-1' });
    expect([first.status, again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([200, 200, 'true', first.body.id]);
    const conv = await post('/convert', key, { transcript: 'Dana sends the budget on Friday.', kind: 'summary' }, { 'idempotency-key': 'honest-2' });
    expect(conv.status).toBe(200);
    const asked = await post('/ask', key, { question: 'When do we ship?' }, { 'idempotency-key': 'honest-3' });
    const askedAgain = await post('/ask', key, { question: 'When do we ship?' }, { 'idempotency-key': 'honest-3' });
    expect([asked.status, asked.body.credits_charged, askedAgain.headers.get('idempotent-replayed'), askedAgain.body.id]).toEqual([200, 1, 'true', asked.body.id]);
    expect(await usage(key)).toMatchObject({ used: 3, reserved: 0 });
  });
});
