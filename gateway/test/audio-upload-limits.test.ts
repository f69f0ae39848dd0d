/**
 * parseAudioUpload under pressure: the size limit firing while the client is still sending,
 * backpressure, aborts, and flat memory for 200 MB bodies.
 * The server and clients are in support/upload-server.ts.
 */
import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import { retainedMemory } from './support/retained-memory';
import { behaviour, BOUNDARY, MiB, MULTIPART, nextOutcome, partHead, postJson, postMultipart, repeated, repeatedSha, send, settledCount, sha256, uploadUrl, useUploadServer, type Sent } from './support/upload-server';


useUploadServer();

const audio = randomBytes(300 * 1024 + 2); // not a multiple of 3: the base64 ends in padding

describe('the size limit', () => {
  it.each([
    ['multipart', (data: Buffer) => postMultipart([{ name: 'audio', data }])],
    ['JSON', (data: Buffer) => postJson(JSON.stringify({ audio_base64: data.toString('base64') }), 7)],
  ])('counts decoded bytes: exactly the limit passes, one more byte fails (%s)', async (_name, post) => {
    behaviour.maxBytes = 1000;
    expect((await post(audio.subarray(0, 1000))).status).toBe(200);
    expect((await post(audio.subarray(0, 1001))).body).toMatchObject({ code: 'audio_too_large' });
  });

  const limit = 1 * MiB;
  const block = randomBytes(48 * 1024); // base64 of it is exactly 64 KiB
  const count = 1024; // 48 MiB of audio, far over the limit

  it('refuses an oversized multipart file with 413 while the client is still sending it', async () => {
    behaviour.maxBytes = limit;
    const head = partHead({ name: 'language', value: '' }) + 'en\r\n' + partHead({ name: 'audio', data: block });
    const res = await send(repeated(head, block, count, `\r\n--${BOUNDARY}--\r\n`), { 'content-type': MULTIPART });
    const seen = await nextOutcome();
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'audio_too_large', param: 'audio', message: expect.stringMatching(/larger than 1 MB/) });
    expect(res.finished).toBe(false);
    expect(res.written).toBeLessThan(block.length * count);
    // It stopped reading within one socket read of the limit.
    expect(seen.bytesRead).toBeLessThanOrEqual(limit + 256 * 1024);
  });

  it('refuses oversized base64 with 413 while the client is still sending it', async () => {
    behaviour.maxBytes = limit;
    const text = Buffer.from(block.toString('base64'));
    const res = await send(repeated('{"language":"en","audio_base64":"', text, count, '"}'), { 'content-type': 'application/json' });
    const seen = await nextOutcome();
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'audio_too_large', param: 'audio_base64' });
    expect(res.finished).toBe(false);
    expect(seen.bytesRead).toBeLessThanOrEqual((limit * 4) / 3 + 256 * 1024);
  });
});

describe('backpressure and aborts', () => {
  const block = randomBytes(48 * 1024);
  const count = 1024; // 48 MiB of audio; 64 MiB as base64

  it.each([
    ['multipart', () => repeated(partHead({ name: 'audio', data: block }), block, count, `\r\n--${BOUNDARY}--\r\n`), MULTIPART],
    ['JSON', () => repeated('{"audio_base64":"', Buffer.from(block.toString('base64')), count, '"}'), 'application/json'],
  ])('stops reading the request while the consumer does not read (%s)', async (_name, body, type) => {
    behaviour.maxBytes = 100 * MiB;
    let release!: () => void;
    behaviour.hold = new Promise<void>((resolve) => (release = resolve));
    const resolved = new Promise<IncomingMessage['socket']>((resolve) => (behaviour.onResolved = (req) => resolve(req.socket)));
    const sending = send(body(), { 'content-type': type });
    const socket = await resolved;
    const stalledAt = await settledCount(() => socket.bytesRead);
    // Kernel socket buffers on loopback hold a few MiB; nothing like the 48+ MiB body.
    expect(stalledAt).toBeLessThan(16 * MiB);
    release();
    const res = await sending;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: block.length * count, sha256: repeatedSha(block, count) });
  });

  it('stops reading the request when the consumer destroys the audio', async () => {
    behaviour.maxBytes = 100 * MiB;
    behaviour.giveUp = true;
    const resolved = new Promise<IncomingMessage['socket']>((resolve) => (behaviour.onResolved = (req) => resolve(req.socket)));
    const sending = send(repeated('{"audio_base64":"', Buffer.from(block.toString('base64')), count, '"}'), { 'content-type': 'application/json' });
    const socket = await resolved;
    const seen = await nextOutcome();
    expect(seen.status).toBe(499);
    expect(await settledCount(() => socket.bytesRead)).toBeLessThan(16 * MiB);
    const res = await sending;
    expect(res.finished).toBe(false);
  });

  it('fails the audio with an AbortError when the client disconnects mid-upload', async () => {
    behaviour.maxBytes = 100 * MiB;
    let resolved!: () => void;
    const started = new Promise<void>((resolve) => (resolved = resolve));
    behaviour.onResolved = () => resolved();
    const req = http.request(uploadUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
    req.on('error', () => {});
    req.write('{"audio_base64":"');
    req.write(block.toString('base64'));
    await started;
    req.destroy();
    const seen = await nextOutcome();
    expect(seen).toMatchObject({ status: 499, body: { code: 'AbortError', message: expect.stringMatching(/disconnected/) } });
  });

  it('fails at once with an AbortError when the client went away before the reading began (it hung: the close was past)', async () => {
    behaviour.afterClose = true;
    const req = http.request(uploadUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
    req.on('error', () => {});
    // A short start of a body, all of which the server takes in: it sees the client leave.
    req.write('{"audio_base64":"AAAA');
    await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    const seen = await Promise.race([nextOutcome(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the upload never settled')), 10_000))]);
    expect(seen).toMatchObject({ status: 499, body: { code: 'AbortError', message: expect.stringMatching(/disconnected/) } });
  });

  it('fails the audio with an AbortError when the signal aborts', async () => {
    const controller = new AbortController();
    behaviour.signal = controller.signal;
    behaviour.onResolved = () => controller.abort();
    const res = await postMultipart([{ name: 'audio', data: audio }], 1024);
    expect(res).toMatchObject({ status: 499, body: { code: 'AbortError', message: expect.stringMatching(/cancelled/) } });
  });

  it('rejects at once when the signal has already aborted', async () => {
    behaviour.signal = AbortSignal.abort();
    const res = await postMultipart([{ name: 'audio', data: audio }]);
    expect(res).toMatchObject({ status: 499, body: { code: 'AbortError' } });
  });
});

describe('memory', () => {
  const block = randomBytes(48 * 1024);
  const count = 3200; // 150 MiB of audio: 200 MiB of base64

  /**
   * Peak growth of retained memory (after a forced collection: what is still referenced), not of
   * RSS, which also holds garbage not collected yet (once 114 MB with nothing held). Sampled every
   * 50 MB the client sends — a handful of collections in all: collecting on a timer slowed a full
   * suite's worker past the test's limit. Holding the body would retain 150–200 MB.
   */
  async function peakGrowth(run: (pieces: (body: Iterable<Buffer | string>) => Iterable<Buffer | string>) => Promise<void>): Promise<number> {
    const before = retainedMemory();
    let peak = before;
    function* sampled(body: Iterable<Buffer | string>): Iterable<Buffer | string> {
      let sent = 0;
      let next = 50 * MiB;
      for (const piece of body) {
        sent += piece.length;
        if (sent >= next) {
          peak = Math.max(peak, retainedMemory());
          next += 50 * MiB;
        }
        yield piece;
      }
    }
    await run(sampled);
    return Math.max(peak, retainedMemory()) - before;
  }

  it('streams a 200 MB base64 body through with flat memory', async () => {
    behaviour.maxBytes = 500 * MiB;
    const text = Buffer.from(block.toString('base64'));
    let res!: Sent;
    const growth = await peakGrowth(async (sampled) => {
      res = await send(sampled(repeated('{"language":"en","audio_base64":"', text, count, '"}')), { 'content-type': 'application/json' });
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: block.length * count, sha256: repeatedSha(block, count), fields: { language: 'en' } });
    expect(growth).toBeLessThan(100 * MiB);
  });

  it('streams a 200 MB multipart file through with flat memory', async () => {
    behaviour.maxBytes = 500 * MiB;
    const count200 = Math.ceil((200 * MiB) / block.length);
    let res!: Sent;
    const growth = await peakGrowth(async (sampled) => {
      res = await send(sampled(repeated(partHead({ name: 'audio', data: block }), block, count200, `\r\n--${BOUNDARY}--\r\n`)), { 'content-type': MULTIPART });
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bytes: block.length * count200, sha256: repeatedSha(block, count200) });
    expect(growth).toBeLessThan(100 * MiB);
  });
});
