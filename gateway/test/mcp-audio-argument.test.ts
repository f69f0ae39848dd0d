/**
 * The MCP transcribe tool's `audio_base64` goes through REST's streaming decoder: a data URL's
 * media type becomes the audio's content type, the bytes come out in pieces, refusals name the
 * parameter, and audio over the tool's limit is audio_too_large before anything else.
 */
import type { Readable } from 'node:stream';
import { MurmurError } from '@murmur/contract';
import { seededRandom } from '@murmur/kit';
import { readAudioArgument } from '../src/mcp/audio-argument';
import { MCP_MAX_AUDIO_BYTES } from '../src/mcp/body-limit';

async function bytesOf(stream: Readable): Promise<{ bytes: Buffer; pieces: number }> {
  const pieces: Buffer[] = [];
  for await (const piece of stream) pieces.push(piece as Buffer);
  return { bytes: Buffer.concat(pieces), pieces: pieces.length };
}

function randomBytes(n: number): Buffer {
  const rand = seededRandom(7);
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

describe('the transcribe tool’s audio_base64', () => {
  const audio = randomBytes(3000);

  it.each([
    ['a data:audio/wav URL', `data:audio/wav;base64,${audio.toString('base64')}`, 'audio/wav'],
    ['a data URL with parameters', `data:audio/ogg;codecs=opus;base64,${audio.toString('base64')}`, 'audio/ogg;codecs=opus'],
    ['plain base64', audio.toString('base64'), 'application/octet-stream'],
    ['URL-safe base64 with MIME line breaks', audio.toString('base64url').replace(/(.{76})/g, '$1\r\n'), 'application/octet-stream'],
  ])('decodes %s with its content type', async (_name, text, contentType) => {
    const arg = readAudioArgument(text);
    expect(arg.problem).toBeUndefined();
    expect(arg.contentType).toBe(contentType);
    expect((await bytesOf(arg.open())).bytes.equals(audio)).toBe(true);
  });

  it('hands large audio over in pieces, not as one buffer', async () => {
    const large = Buffer.alloc(7 * 1024 * 1024, audio);
    const { bytes, pieces } = await bytesOf(readAudioArgument(large.toString('base64')).open());
    expect(bytes.equals(large)).toBe(true);
    expect(pieces).toBeGreaterThan(1);
  });

  it.each([
    ['not base64', '!!!not base64!!!', /not valid base64/],
    ['a dangling character', 'AAAAA', /not valid base64/],
    ['a data URL without audio', 'data:audio/wav;base64,', /is empty/],
    ['whitespace only', ' \n ', /is empty/],
    ['a malformed data URL', 'data:audio wav;base64,AAAA', /data URL/],
  ])('returns %s as an invalid_request problem naming audio_base64 (thrown later, after the other checks)', (_name, text, message) => {
    const { problem } = readAudioArgument(text);
    expect(problem).toBeInstanceOf(MurmurError);
    expect(problem).toMatchObject({ code: 'invalid_request', param: 'audio_base64' });
    expect(problem!.message).toMatch(message);
  });

  it('refuses audio one group over the limit as audio_too_large at once', () => {
    const over = 'A'.repeat(((MCP_MAX_AUDIO_BYTES + 3) / 3) * 4);
    expect(() => readAudioArgument(over)).toThrow(expect.objectContaining({ code: 'audio_too_large', param: 'audio_base64' }));
  });

  it('takes audio of exactly the limit', () => {
    expect(readAudioArgument('A'.repeat((MCP_MAX_AUDIO_BYTES / 3) * 4)).problem).toBeUndefined();
  });
});
