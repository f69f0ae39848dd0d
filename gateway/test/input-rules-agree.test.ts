/**
 * The gateway and the transcription service check the same inputs: the gateway before any
 * paid work, the service again for its direct gRPC callers. They once disagreed (the service
 * took "en_US" and tags of any length, and 500 MiB where the gateway and DESIGN.md say
 * 500,000,000 bytes); here both verdicts are taken at the boundary and must match.
 */
import { MAX_AUDIO_BYTES, MurmurError } from '@murmur/contract';
import { createClient, createLogger } from '@murmur/kit';
import { billing } from '@murmur/proto';
import { audioLimitOf, spoolUpload, TranscriptionService } from '@murmur/transcription';
import * as ops from '../src/operations';
import { UploadStream } from '../src/rest/upload-stream';

type Verdict = 'accepted' | string;

async function verdict(run: () => unknown): Promise<Verdict> {
  try {
    await run();
    return 'accepted';
  } catch (err) {
    if (err instanceof MurmurError) return `${err.code} (${err.param})`;
    throw err;
  }
}

describe('the gateway and the transcription service agree on', () => {
  // Never called: validate() and the spool run before billing is asked anything.
  const billingClient = createClient(billing.BillingServiceClient, '127.0.0.1:1');
  const service = new TranscriptionService({
    billing: billingClient,
    // An engine for any language (as whisper's multilingual models and the OpenAI engine are),
    // so the verdict is the service's own tag rule, not an engine's language list.
    engine: { name: 'any-language', model: 'none', recognize: () => Promise.reject(new Error('not used')) },
    log: createLogger('input-rules-agree', 'silent'),
  });
  afterAll(() => billingClient.close());

  const config = { userId: 'usr_test', language: '', idempotencyKey: '', maxBytes: 0, filename: '', contentType: '', admissionId: '' };

  /** A well-formed tag of `n` characters (n from 31 to 38): "en-aaaaaaaa-bbbbbbbb-cccccccc-dd…". */
  function tagOfLength(n: number): string {
    const tag = `en-${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-${'d'.repeat(n - 30)}`;
    if (tag.length !== n) throw new Error(`tagOfLength(${n}) is ${tag.length} long`);
    return tag;
  }

  const tags: Array<[string, boolean]> = [
    ['', true],
    ['en', true],
    ['EN', true],
    ['pt-BR', true],
    ['zh-Hant-TW', true],
    ['en-x', true],
    ['yue-HK', true],
    [tagOfLength(35), true], // the longest
    [tagOfLength(36), false],
    [`en${'-abcdefgh'.repeat(10)}`, false],
    ['en_US', false],
    ['e', false],
    ['engl', false],
    ['en-', false],
    ['en--US', false],
    ['en-abcdefghi', false],
    ['en US', false],
    [' en', false],
    ['12', false],
  ];

  it.each(tags)('language %j (accepted: %s)', async (tag, accepted) => {
    const gateway = await verdict(() => ops.languageOf(tag));
    const direct = await verdict(() => service.validate({ ...config, language: tag }));
    expect({ gateway: gateway === 'accepted', direct: direct === 'accepted' }).toEqual({ gateway: accepted, direct: accepted });
    if (!accepted) expect([gateway, direct]).toEqual(['invalid_request (language)', 'invalid_request (language)']);
  });

  it('one audio limit: what the gateway sends as max_bytes is what the service applies when none is sent', () => {
    expect(ops.MAX_AUDIO_BYTES).toBe(500_000_000);
    expect(audioLimitOf({ maxBytes: 0 })).toBe(ops.MAX_AUDIO_BYTES);
    expect(audioLimitOf({ maxBytes: ops.MAX_AUDIO_BYTES })).toBe(MAX_AUDIO_BYTES);
  });

  // One 50 MB buffer reused (a Readable keeps references, not copies), so memory stays small.
  const block = Buffer.alloc(50_000_000);
  function chunksOf(total: number): Buffer[] {
    const out: Buffer[] = [];
    for (let left = total; left > 0; left -= block.length) out.push(left >= block.length ? block : block.subarray(0, left));
    return out;
  }

  it.each([
    ['one byte under 500 MB', MAX_AUDIO_BYTES - 1, 'accepted'],
    ['exactly 500 MB', MAX_AUDIO_BYTES, 'accepted'],
    ['one byte over 500 MB', MAX_AUDIO_BYTES + 1, 'audio_too_large'],
  ])('audio %s', async (_name, size, expected) => {
    const gateway = await verdict(() => {
      const upload = new UploadStream({ maxBytes: ops.MAX_AUDIO_BYTES, param: 'audio' });
      upload.attach({ describe: () => ({ fields: {}, languageKnown: true, filename: 'a', contentType: 'audio/wav' }), pull: () => {}, stop: () => {} });
      for (const chunk of chunksOf(size)) upload.push(chunk);
      upload.audio.destroy();
    });
    async function* stream() {
      yield* chunksOf(size);
    }
    const direct = await verdict(() => spoolUpload(stream(), '/dev/null', audioLimitOf({ maxBytes: 0 })));
    expect(gateway.split(' ')[0]).toBe(expected);
    expect(direct.split(' ')[0]).toBe(expected);
  });
});
