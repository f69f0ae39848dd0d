/**
 * The streaming base64 decoder: what it accepts (both alphabets, optional padding, whitespace,
 * a data-URL prefix), what it refuses, and that the bytes do not depend on where the text is
 * split — every split of a sample, and seeded random splits of random inputs.
 */
import { MurmurError } from '@murmur/contract';
import { seededRandom } from '@murmur/kit';
import { Base64Decoder } from '../src/upload/base64-decoder';

function decode(pieces: string[]): { bytes: Buffer; mediaType: string | undefined } {
  const d = new Base64Decoder({ param: 'audio_base64' });
  const out = pieces.map((p) => d.write(p));
  out.push(d.end());
  return { bytes: Buffer.concat(out), mediaType: d.mediaType };
}

function failure(pieces: string[]): MurmurError {
  try {
    decode(pieces);
  } catch (err) {
    if (err instanceof MurmurError) return err;
    throw err;
  }
  throw new Error(`decoded without error: ${JSON.stringify(pieces)}`);
}


function randomSplit(text: string, rand: () => number): string[] {
  const pieces: string[] = [];
  let i = 0;
  while (i < text.length) {
    const n = rand() < 0.3 ? 1 : 1 + Math.floor(rand() * 9);
    pieces.push(text.slice(i, i + n));
    i += n;
  }
  return pieces;
}

describe('Base64Decoder', () => {
  const valid: Array<[string, string, Buffer, string | undefined]> = [
    ['empty text', '', Buffer.alloc(0), undefined],
    ['one whole quad', 'TWFu', Buffer.from('Man'), undefined],
    ['two padding characters', 'TQ==', Buffer.from('M'), undefined],
    ['one padding character', 'TWE=', Buffer.from('Ma'), undefined],
    ['no padding (2 left over)', 'TQ', Buffer.from('M'), undefined],
    ['no padding (3 left over)', 'TWE', Buffer.from('Ma'), undefined],
    ['the standard alphabet', '+/8=', Buffer.from([0xfb, 0xff]), undefined],
    ['the URL-safe alphabet', '-_8', Buffer.from([0xfb, 0xff]), undefined],
    ['both alphabets mixed', '+_-/', Buffer.from('+/+/', 'base64'), undefined],
    ['MIME line breaks, tabs and spaces', 'TW\r\nFu\tTW E=\n', Buffer.from('ManMa'), undefined],
    ['whitespace between padding characters', 'TQ= =', Buffer.from('M'), undefined],
    ['a data URL prefix', 'data:audio/mpeg;base64,TWFu', Buffer.from('Man'), 'audio/mpeg'],
    ['a data URL with parameters, any case', 'DATA:audio/ogg;codecs=opus;BASE64,TWFu', Buffer.from('Man'), 'audio/ogg;codecs=opus'],
    ['a data URL without a media type', 'data:;base64,TWFu', Buffer.from('Man'), undefined],
    ['base64 that merely starts like "data"', 'dataTWFu', Buffer.from('dataTWFu', 'base64'), undefined],
    ['base64 that is a prefix of "data:"', 'dat', Buffer.from('dat', 'base64'), undefined],
  ];

  it.each(valid)('decodes %s', (_name, text, expected, mediaType) => {
    const whole = decode([text]);
    expect(whole.bytes.equals(expected)).toBe(true);
    expect(whole.mediaType).toBe(mediaType);
    const byChar = decode([...text]);
    expect(byChar.bytes.equals(expected)).toBe(true);
    expect(byChar.mediaType).toBe(mediaType);
  });

  const invalid: Array<[string, string, RegExp]> = [
    ['a character outside both alphabets', 'TW!u', /the character `!`/],
    ['a non-ASCII character', 'TWFué', /U\+00E9/],
    ['a character whose low byte is a base64 letter', 'TWF\u0151', /U\+0151/],
    ['a form feed (not MIME whitespace)', 'TW\fFu', /U\+000C/],
    ['a single dangling character', 'TWFuT', /middle of a group/],
    ['padding that does not match (one short)', 'TQ=', /padding does not match/],
    ['padding after a whole quad', 'TWFu=', /padding does not match/],
    ['three padding characters', 'TQ===', /more than two/],
    ['data after padding', 'TQ==TWFu', /data after the `=` padding/],
    ['data after padding in a later piece', 'TWE=A', /data after the `=` padding/],
    ['a data URL that is not base64', 'data:audio/mpeg,TWFu', /data URL/],
    ['a data URL with no comma', 'data:audio/mpeg;base64', /data URL/],
    ['a data URL with a malformed media type', 'data:audio;base64,TWFu', /data URL/],
  ];

  it.each(invalid)('refuses %s, naming the parameter', (_name, text, message) => {
    for (const pieces of [[text], [...text]]) {
      const err = failure(pieces);
      expect(err.code).toBe('invalid_request');
      expect(err.param).toBe('audio_base64');
      expect(err.message).toMatch(/^`audio_base64` is not valid base64: /);
      expect(err.message).toMatch(message);
    }
  });

  it('refuses an unending data URL prefix without holding it', () => {
    const d = new Base64Decoder({ param: 'audio_base64' });
    expect(() => {
      d.write('data:audio/');
      d.write('x'.repeat(300));
    }).toThrow(/data URL/);
  });

  it('treats "data:" as base64 text when data URLs are turned off', () => {
    const d = new Base64Decoder({ param: 'p', dataUrl: false });
    expect(() => d.write('data:')).toThrow(/the character `:`/);
  });

  it('gives the same bytes for every two-cut split of a prefixed, wrapped sample', () => {
    const raw = Buffer.from(Array.from({ length: 23 }, (_, i) => (i * 37 + 11) & 0xff));
    const text = `data:audio/wav;base64,${raw.toString('base64').replace(/(.{8})/g, '$1\r\n')}`;
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        const out = decode([text.slice(0, i), text.slice(i, j), text.slice(j)]);
        expect(out.bytes.equals(raw)).toBe(true);
        expect(out.mediaType).toBe('audio/wav');
      }
    }
  });

  it('round-trips random bytes in random encodings and random splits (seeded)', () => {
    const rand = seededRandom(20240607);
    for (let round = 0; round < 500; round++) {
      const raw = Buffer.from(Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)));
      let text = rand() < 0.5 ? raw.toString('base64') : raw.toString('base64url');
      if (rand() < 0.5) text = text.replace(/=+$/, '');
      if (rand() < 0.3) text = text.replace(/(.{4,76}?)/g, (m) => (rand() < 0.2 ? `${m}\r\n` : m));
      if (rand() < 0.3) text = ` ${text}\n`;
      if (rand() < 0.3) text = `data:audio/mpeg;base64,${text}`;
      const out = decode(randomSplit(text, rand));
      expect(out.bytes.toString('hex')).toBe(raw.toString('hex'));
    }
  });
});
