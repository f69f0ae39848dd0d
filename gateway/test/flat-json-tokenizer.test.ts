/**
 * The incremental flat-object JSON tokenizer: events for valid documents, the errors for
 * invalid ones (and which parameter they name), the held-size cap, and seeded fuzzing that
 * splits random documents at random byte boundaries (inside escapes, UTF-8 sequences and
 * literals) and compares the events with JSON.parse.
 */
import { MurmurError, seededRandom } from '@murmur/kit';
import { FlatJsonTokenizer, type JsonScalar } from '../src/rest/flat-json-tokenizer';

type Event = ['member', string, JsonScalar] | ['stream', string, string];

function tokenize(pieces: Array<string | Buffer>, streamKeys: string[] = ['s'], maxHeldChars = 1 << 20): Event[] {
  const events: Event[] = [];
  let streaming: [string, string[]] | null = null;
  const t = new FlatJsonTokenizer(
    {
      member: (key, value) => events.push(['member', key, value]),
      streamStart: (key) => {
        expect(streaming).toBeNull();
        streaming = [key, []];
      },
      streamText: (key, text) => {
        expect(streaming?.[0]).toBe(key);
        expect(text.length).toBeGreaterThan(0);
        streaming![1].push(text);
      },
      streamEnd: (key) => {
        expect(streaming?.[0]).toBe(key);
        events.push(['stream', key, streaming![1].join('')]);
        streaming = null;
      },
    },
    { streamKeys: new Set(streamKeys), maxHeldChars },
  );
  for (const p of pieces) t.write(p);
  t.end();
  return events;
}

function failure(pieces: Array<string | Buffer>, streamKeys?: string[], maxHeldChars?: number): MurmurError {
  try {
    tokenize(pieces, streamKeys, maxHeldChars);
  } catch (err) {
    if (err instanceof MurmurError) return err;
    throw err;
  }
  throw new Error(`tokenized without error: ${JSON.stringify(pieces)}`);
}

function bytesOneByOne(text: string): Buffer[] {
  return [...Buffer.from(text, 'utf8')].map((b) => Buffer.from([b]));
}


describe('FlatJsonTokenizer', () => {
  const valid: Array<[string, string, Event[]]> = [
    ['an empty object', '{}', []],
    ['whitespace everywhere', ' \r\n\t{ "a" : 1 ,\n"b" :true } \n', [['member', 'a', 1], ['member', 'b', true]]],
    ['every literal', '{"t":true,"f":false,"n":null}', [['member', 't', true], ['member', 'f', false], ['member', 'n', null]]],
    [
      'numbers of every shape',
      '{"a":0,"b":-0,"c":12.5,"d":1e3,"e":-2.5E-2,"f":7}',
      [['member', 'a', 0], ['member', 'b', -0], ['member', 'c', 12.5], ['member', 'd', 1000], ['member', 'e', -0.025], ['member', 'f', 7]],
    ],
    [
      'every escape, a surrogate pair and raw UTF-8',
      '{"e":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\ude00 é😀"}',
      [['member', 'e', '"\\/\b\f\n\r\t\u00e9😀 é😀']],
    ],
    ['an escaped key', '{"a\\u0062\\"":1}', [['member', 'ab"', 1]]],
    ['a streamed string with escapes', '{"s":"ab\\/cd\\u0041","x":"y"}', [['stream', 's', 'ab/cdA'], ['member', 'x', 'y']]],
    ['an empty streamed string', '{"s":""}', [['stream', 's', '']]],
    ['a stream key with a non-string value', '{"s":null}', [['member', 's', null]]],
  ];

  it.each(valid)('reads %s, whole and byte by byte', (_name, json, expected) => {
    expect(tokenize([json])).toEqual(expected);
    expect(tokenize(bytesOneByOne(json))).toEqual(expected);
    expect(expected.filter((e) => e[0] === 'member')).toEqual(
      Object.entries(JSON.parse(json) as Record<string, JsonScalar>)
        .filter(([k, v]) => k !== 's' || typeof v !== 'string')
        .map(([k, v]) => ['member', k, v]),
    );
  });

  const invalid: Array<[string, string, string | null, RegExp]> = [
    ['an empty body', '', null, /empty/],
    ['only whitespace', ' \n ', null, /empty/],
    ['an array', '[1]', null, /must be a JSON object/],
    ['a string', '"x"', null, /must be a JSON object/],
    ['a nested object', '{"a":{"b":1}}', 'a', /not an object or array/],
    ['a nested array', '{"s":[1]}', 's', /not an object or array/],
    ['a trailing comma', '{"a":1,}', null, /member name/],
    ['a missing colon', '{"a" 1}', null, /`:` was expected/],
    ['a missing comma', '{"a":1 "b":2}', null, /`,` or `}`/],
    ['a bare word', '{"a":yes}', null, /not valid JSON/],
    ['a misspelt literal', '{"a":trve}', null, /not valid JSON/],
    ['a leading zero', '{"a":01}', null, /not a valid number/],
    ['a lone minus', '{"a":-}', null, /not a valid number/],
    ['an unescaped newline in a string', '{"a":"x\ny"}', null, /control character/],
    ['an unknown escape', '{"a":"\\x"}', null, /not a JSON escape/],
    ['a short \\u escape', '{"s":"\\u12g4"}', null, /four hex digits/],
    ['a single-quoted key', "{'a':1}", null, /member name/],
    ['data after the object', '{"a":1} {', null, /after its closing/],
    ['a truncated object', '{"a":1', null, /ends before/],
    ['a truncated streamed string', '{"s":"abc', null, /ends before/],
    ['a truncated literal', '{"a":tru', null, /ends before/],
  ];

  it.each(invalid)('refuses %s as invalid_request', (_name, json, param, message) => {
    for (const pieces of [[json], bytesOneByOne(json)]) {
      const err = failure(pieces);
      expect(err.code).toBe('invalid_request');
      expect(err.param).toBe(param);
      expect(err.message).toMatch(message);
    }
  });

  it('caps what it holds, naming the member being read, but not streamed strings', () => {
    const big = 'x'.repeat(100);
    expect(failure([`{"a":"${big}"}`], [], 50).param).toBe('a');
    expect(failure([`{"${big}":1}`], [], 50).param).toBeNull();
    expect(failure([`{${' '.repeat(100)}}`], [], 50).message).toMatch(/exceed/);
    expect(tokenize([`{"s":"${big.repeat(100)}","a":"1"}`], ['s'], 50)).toEqual([
      ['stream', 's', big.repeat(100)],
      ['member', 'a', '1'],
    ]);
  });

  it('hands raw control characters in a streamed string on unchecked (the receiver decides)', () => {
    expect(tokenize(['{"s":"x\ny\u0001"}'])).toEqual([['stream', 's', 'x\ny\u0001']]);
    expect(failure(['{"a":"x\u0001"}']).message).toMatch(/control character/);
  });

  it('finds every escape when consecutive pieces are identical text', () => {
    expect(tokenize(['{"s":"', '\\/B', '\\/B', '"}'])).toEqual([['stream', 's', '/B/B']]);
  });

  it('decodes escape-dense streamed strings split into equal-sized pieces', () => {
    const rand = seededRandom(99);
    const atoms = ['\\/', '\\u0041', '\\r\\n', 'B', 'cd', '\\\\', '\\"'];
    for (let round = 0; round < 200; round++) {
      const escaped = Array.from({ length: 1 + Math.floor(rand() * 40) }, () => atoms[Math.floor(rand() * atoms.length)]).join('');
      const body = `{"a":"x\\/y","s":"${escaped}"}`;
      const expected: Event[] = [['member', 'a', 'x/y'], ['stream', 's', JSON.parse(`"${escaped}"`) as string]];
      for (let size = 1; size <= 8; size++) {
        expect(tokenize(Array.from({ length: Math.ceil(body.length / size) }, (_, i) => body.slice(i * size, (i + 1) * size)))).toEqual(expected);
      }
    }
  });

  it('refuses any use after an error', () => {
    const t = new FlatJsonTokenizer(
      { member: () => {}, streamStart: () => {}, streamText: () => {}, streamEnd: () => {} },
      { streamKeys: new Set(), maxHeldChars: 1000 },
    );
    expect(() => t.write('[')).toThrow(MurmurError);
    expect(() => t.write('{}')).toThrow(/after an error/);
  });

  it('matches JSON.parse on random flat objects split at random bytes (seeded)', () => {
    const rand = seededRandom(7);
    const alphabet = ['a', 'Z', '0', ' ', '/', '"', '\\', '\n', '\t', '\u0001', 'é', '€', '😀', '\ud800'];
    const randomString = () => Array.from({ length: Math.floor(rand() * 12) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    // A serialiser that escapes more variously than JSON.stringify does.
    const encode = (s: string) =>
      '"' +
      [...s]
        .map((ch) => {
          const r = rand();
          if (ch === '/' && r < 0.5) return '\\/';
          if (r < 0.2) return ch.split('').map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
          return JSON.stringify(ch).slice(1, -1);
        })
        .join('') +
      '"';
    const ws = () => [' ', '', '\n', '\t', '\r\n'][Math.floor(rand() * 5)] as string;
    const randomValue = (): JsonScalar => {
      const r = rand();
      if (r < 0.4) return randomString();
      if (r < 0.55) return Math.floor((rand() - 0.5) * 1e6) / (rand() < 0.5 ? 1 : 1000);
      if (r < 0.7) return rand() < 0.5;
      return null;
    };
    for (let round = 0; round < 400; round++) {
      const entries = new Map<string, JsonScalar>();
      const n = Math.floor(rand() * 6);
      for (let i = 0; i < n; i++) entries.set(rand() < 0.3 ? 's' : randomString(), randomValue());
      const body =
        ws() +
        '{' +
        [...entries].map(([k, v]) => ws() + encode(k) + ws() + ':' + ws() + (typeof v === 'string' ? encode(v) : JSON.stringify(v)) + ws()).join(',') +
        '}' +
        ws();
      expect(JSON.parse(body)).toEqual(Object.fromEntries(entries));
      const expected: Event[] = [...entries].map(([k, v]) => (k === 's' && typeof v === 'string' ? ['stream', k, v] : ['member', k, v]));
      const bytes = Buffer.from(body, 'utf8');
      const pieces: Buffer[] = [];
      for (let i = 0; i < bytes.length; ) {
        const len = 1 + Math.floor(rand() * 7);
        pieces.push(bytes.subarray(i, i + len));
        i += len;
      }
      expect(tokenize(pieces)).toEqual(expected);
    }
  });
});
