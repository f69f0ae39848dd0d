/**
 * A live stream against real billing (live-session.ts, live-hold.ts): the hold is extended a
 * minute at a time ahead of the audio, and a user whose credits pay for one minute has the stream
 * end at that minute — every word before it final, that minute charged, nothing more — with
 * insufficient_tokens. The pace check is the session's own clock, stepped here so that minutes of
 * audio stream in a second (real-time pace is the gateway test's).
 */
import { MurmurError } from '@murmur/contract';
import { createClient, createLogger, newId } from '@murmur/kit';
import { createPolicyClient, openTestDatabase, testAccess, testMinter } from '@murmur/kit/testing';
import { BILLING_MIGRATIONS_DIR, startBillingService } from '@murmur/billing';
import { billing, transcription } from '@murmur/proto';
import { CallerLimits, MemoryLeaseSet } from '../src/caller-limits';
import { createPocketsphinxEngine } from '../src/engines/pocketsphinx';
import { LiveSessions } from '../src/live/live-session';
import { librivoxUtterances } from '../src/speech-fixtures';
import { readFileSync } from 'node:fs';

type Response = transcription.StreamTranscriptionResponse;

describe('a live stream and its credits', () => {
  const log = createLogger('live-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  let stop: () => Promise<void>;
  let sessions: LiveSessions;
  let cutting: LiveSessions;
  let admin: ReturnType<typeof createPolicyClient<billing.BillingServiceClient>>;

  beforeAll(async () => {
    const db = await openTestDatabase('billing', BILLING_MIGRATIONS_DIR);
    const server = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0' });
    admin = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${server.port}`, { deadlineMs: 30_000 });
    const own = createClient(billing.BillingServiceClient, `127.0.0.1:${server.port}`, { deadlineMs: 30_000, identity: testMinter('transcription') });
    // A clock that steps a second at every look: no stream here is ever too fast.
    let t = 0;
    const deps = { billing: own, engine: createPocketsphinxEngine(), limits: new CallerLimits(new MemoryLeaseSet()), log, model: 'pocketsphinx/en-us', leaseSeconds: 30, now: () => (t += 1000) };
    sessions = new LiveSessions(deps);
    // Utterances cut every 2 s: the LibriVox sentence (7 s, no pause) is one utterance otherwise.
    cutting = new LiveSessions({ ...deps, maxUtteranceSeconds: 2 });
    stop = async () => {
      own.close();
      admin.close();
      await server.stop();
      await db.close();
    };
  });
  afterAll(() => stop());

  /** 16 kHz PCM: one spoken utterance, then `silence` seconds of silence. */
  function speechThenSilence(silence: number): Buffer {
    const speech = readFileSync(librivoxUtterances()[0]!.wav).subarray(44);
    return Buffer.concat([speech, Buffer.alloc(silence * 32_000)]);
  }

  async function run(userId: string, pcm: Buffer, live = sessions, cancelAt?: (e: Response) => boolean): Promise<{ events: Response[]; error: unknown }> {
    async function* requests(): AsyncGenerator<transcription.StreamTranscriptionRequest> {
      yield {
        payload: {
          $case: 'config',
          value: { userId, admissionId: '', encoding: transcription.AudioEncoding.AUDIO_ENCODING_LINEAR16, sampleRate: 16_000, language: '', save: false, title: '', folderId: '' },
        },
      };
      for (let at = 0; at < pcm.length; at += 32_000) yield { payload: { $case: 'audio', value: pcm.subarray(at, at + 32_000) } };
    }
    const events: Response[] = [];
    const caller = new AbortController();
    try {
      for await (const e of live.run(requests(), caller.signal)) {
        events.push(e);
        if (cancelAt?.(e)) caller.abort(new Error('the caller went away'));
      }
      return { events, error: undefined };
    } catch (error) {
      return { events, error };
    }
  }

  const usage = async (userId: string) => (await admin.getUsage({ userId })).usage!;

  it('extends the hold a minute at a time and charges the seconds received', async () => {
    const userId = newId('usr');
    const { events, error } = await run(userId, speechThenSilence(150));
    expect(error).toBeUndefined();
    const closed = events.at(-1)?.event;
    expect(closed?.$case).toBe('closed');
    if (closed?.$case !== 'closed') return;
    expect(closed.value.durationSeconds).toBeGreaterThan(150);
    // Three started minutes at the free plan's price of one credit a minute.
    expect(closed.value.creditsCharged).toBe(3);
    const u = await usage(userId);
    expect([u.creditsReserved, u.transcriptionSeconds]).toEqual([0, Math.ceil(closed.value.durationSeconds)]);
  }, 60_000);

  it('cuts continuous speech into finals at the longest utterance, losing no word', async () => {
    const speech = speechThenSilence(1);
    const spans = async (live: LiveSessions) => {
      const { events } = await run(newId('usr'), speech, live);
      return events.flatMap((e) => (e.event?.$case === 'finalTranscript' ? [e.event.value] : []));
    };
    const whole = await spans(sessions);
    expect(whole).toHaveLength(1);
    expect(whole[0]!.endSeconds - whole[0]!.startSeconds).toBeGreaterThan(5);
    const cut = await spans(cutting);
    // The cut follows the recognizer's events, which lag the audio sent at full speed by a second or two.
    expect(cut.length).toBeGreaterThanOrEqual(2);
    for (const f of cut) expect(f.endSeconds - f.startSeconds).toBeLessThan(5);
    const words = (fs: typeof cut) => fs.map((f) => f.text).join(' ').split(' ').length;
    expect(Math.abs(words(cut) - words(whole))).toBeLessThanOrEqual(3);
  }, 60_000);

  it('charges a caller that goes away before any final for the audio its partials covered', async () => {
    const userId = newId('usr');
    const { events, error } = await run(userId, speechThenSilence(1), sessions, (e) => e.event?.$case === 'partial' && e.event.value.endSeconds > 2);
    expect(error).toBeInstanceOf(MurmurError);
    expect(events.some((e) => e.event?.$case === 'finalTranscript')).toBe(false);
    const u = await usage(userId);
    expect(u.creditsReserved).toBe(0);
    expect(u.transcriptionSeconds).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('ends a stream whose credits pay for one minute at that minute: its words final, that minute charged, insufficient_tokens', async () => {
    const userId = newId('usr');
    await admin.adjustCredits({ userId, monthlyCredits: 1, note: 'one minute' });
    const { events, error } = await run(userId, speechThenSilence(120));
    expect(error).toBeInstanceOf(MurmurError);
    expect((error as MurmurError).code).toBe('insufficient_tokens');
    expect((error as MurmurError).message).toContain('every word before that final and charged');
    const finals = events.filter((e) => e.event?.$case === 'finalTranscript');
    expect(finals.length).toBeGreaterThan(0);
    expect(events.some((e) => e.event?.$case === 'closed')).toBe(false);
    const u = await usage(userId);
    expect([u.monthlyCreditsRemaining, u.creditsReserved]).toEqual([0, 0]);
    expect(u.transcriptionSeconds).toBeLessThanOrEqual(60);
    expect(u.transcriptionSeconds).toBeGreaterThan(40);
  }, 60_000);
});
