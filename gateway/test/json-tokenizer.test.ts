/**
 * The incremental JSON tokenizer: events for valid documents, the errors for invalid ones (and
 * which parameter they name), the held-size cap, bytes that are not UTF-8 (refused naming their
 * string), nesting with the text it keeps for JSON.parse, and seeded fuzzing that splits random
 * documents at random byte boundaries (inside escapes, UTF-8 sequences and literals) and
 * compares the events with JSON.parse.
 */
import { MurmurError } from '@murmur/contract';
import { seededRandom } from '@murmur/kit';
import { firstInvalidUtf8, JsonTokenizer, type JsonScalar } from '../src/http/json-tokenizer';

type Event = ['member', string, JsonScalar] | ['stream', string, string];

function tokenize(pieces: Array<string | Buffer>, streamKeys: string[] = ['s'], maxHeldChars = 1 << 20): Event[] {
  const events: Event[] = [];
  let streaming: [string, string[]] | null = null;
  const t = new JsonTokenizer(
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
    { streams: ([key]) => streamKeys.includes(key!), maxHeldChars },
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


describe('JsonTokenizer on one flat object', () => {
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
    const t = new JsonTokenizer(
      { member: () => {}, streamStart: () => {}, streamText: () => {}, streamEnd: () => {} },
      { streams: () => false, maxHeldChars: 1000 },
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

describe('JsonTokenizer and bytes that are not UTF-8', () => {
  const bad: Array<[string, Buffer]> = [
    ['a lone continuation byte', Buffer.from([0x80])],
    ['an overlong two-byte form', Buffer.from([0xc0, 0xaf])],
    ['an overlong three-byte form', Buffer.from([0xe0, 0x80, 0xaf])],
    ['an encoded surrogate', Buffer.from([0xed, 0xa0, 0x80])],
    ['a code point past U+10FFFF', Buffer.from([0xf4, 0x90, 0x80, 0x80])],
    ['a byte that never starts a sequence', Buffer.from([0xff])],
    ['a sequence cut by an ASCII byte', Buffer.from([0xc3, 0x28])],
  ];
  const body = (value: Buffer, before = 'é ') => Buffer.concat([Buffer.from(`{"a":"ok","title":"${before}`), value, Buffer.from('x","b":1}')]);

  it.each(bad)('refuses %s inside a string value, naming that member, whole and byte by byte', (_name, bytes) => {
    for (const pieces of [[body(bytes)], [...body(bytes)].map((b) => Buffer.from([b]))]) {
      const err = failure(pieces);
      expect(err).toMatchObject({ code: 'invalid_request', param: 'title' });
      expect(err.message).toMatch(/not valid UTF-8/);
    }
  });

  it('finds the bad byte wherever the pieces split, after valid multi-byte text', () => {
    const whole = body(Buffer.from([0xe2, 0x82]), '€😀');
    for (let cut = 1; cut < whole.length; cut++) {
      expect(failure([whole.subarray(0, cut), whole.subarray(cut)]).param).toBe('title');
    }
  });

  it('names no member for a bad byte in a key of the outer object, or between values', () => {
    expect(failure([Buffer.concat([Buffer.from('{"ti'), Buffer.from([0xff]), Buffer.from('tle":"x"}')])]).param).toBeNull();
    expect(failure([Buffer.concat([Buffer.from('{"a":1'), Buffer.from([0xff]), Buffer.from('}')])]).param).toBeNull();
  });

  it('refuses a body that ends inside a UTF-8 sequence, naming the string', () => {
    const err = failure([Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xe2, 0x82])])]);
    expect(err).toMatchObject({ code: 'invalid_request', param: 'title' });
  });

  it('refuses bad bytes in a streamed string too, naming it', () => {
    expect(failure([Buffer.concat([Buffer.from('{"s":"AAAA'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])]).param).toBe('s');
  });

  it('agrees with a strict decoder on where the first bad byte is (seeded)', () => {
    const rand = seededRandom(11);
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (let round = 0; round < 500; round++) {
      const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 8) }, () => (rand() < 0.5 ? 0x80 + Math.floor(rand() * 128) : Math.floor(rand() * 256))));
      const at = firstInvalidUtf8(bytes);
      expect(() => strict.decode(bytes.subarray(0, at))).not.toThrow();
      if (at < bytes.length) expect(() => strict.decode(bytes)).toThrow();
    }
  });
});

describe('JsonTokenizer on nested documents', () => {
  /** Tokenizes `json` streaming the strings at `streamed` paths; returns the members, streams and kept text. */
  function nested(json: string | Buffer, streamed: string[], opts: { maxDepth?: number; pieceSize?: number; maxHeldChars?: number } = {}) {
    const events: Array<[string, string, unknown]> = [];
    let text = '';
    const t: JsonTokenizer = new JsonTokenizer(
      {
        member: (key, value) => events.push(['member', t.path.join('.'), value]),
        streamStart: () => {
          text = '';
        },
        streamText: (_key, piece) => {
          text += piece;
        },
        streamEnd: () => events.push(['stream', t.path.join('.'), text]),
      },
      { streams: (path) => streamed.includes(path.join('.')), maxHeldChars: opts.maxHeldChars ?? 1 << 20, maxDepth: opts.maxDepth ?? 64, keepText: true },
    );
    const bytes = Buffer.isBuffer(json) ? json : Buffer.from(json);
    const size = opts.pieceSize ?? bytes.length;
    for (let i = 0; i < bytes.length; i += size) t.write(bytes.subarray(i, i + size));
    t.end();
    return { events, kept: t.kept };
  }

  const rpc = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"transcribe","arguments":{"audio_base64":"QUJD\\/","language":"en","tags":[1,[true,null],{"x":"y"}]},"_meta":{"progressToken":3}}}';

  it('streams the string at a path and keeps the rest as text that JSON.parse reads, in pieces of any size', () => {
    const expected = JSON.parse(rpc);
    expected.params.arguments.audio_base64 = '';
    for (const pieceSize of [1, 2, 3, 7, 1000]) {
      const { events, kept } = nested(rpc, ['params.arguments.audio_base64'], { pieceSize });
      expect(JSON.parse(kept)).toEqual(expected);
      expect(events).toContainEqual(['stream', 'params.arguments.audio_base64', 'QUJD/']);
      expect(events).toContainEqual(['member', 'method', 'tools/call']);
      expect(events).toContainEqual(['member', 'params.arguments.tags.1.0', true]);
      expect(events).toContainEqual(['member', 'params.arguments.tags.2.x', 'y']);
      expect(events).toContainEqual(['member', 'params._meta.progressToken', 3]);
    }
  });

  it('reads a top-level array and empty containers', () => {
    expect(JSON.parse(nested('[{},[],{"a":[]}]', []).kept)).toEqual([{}, [], { a: [] }]);
  });

  it('refuses nesting deeper than maxDepth, naming the key', () => {
    let err: unknown;
    try {
      nested('{"a":{"b":{"c":1}}}', [], { maxDepth: 2 });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'invalid_request', param: 'b' });
  });

  it('refuses mismatched brackets', () => {
    for (const json of ['{"a":[1}', '{"a":1]', '[1,]', '[1 2]']) expect(() => nested(json, [])).toThrow(MurmurError);
  });

  it('names the nested member a bad UTF-8 byte is in by its path', () => {
    const json = Buffer.concat([Buffer.from('{"params":{"arguments":{"title":"a'), Buffer.from([0xff]), Buffer.from('"}}}')]);
    expect(() => nested(json, [])).toThrow(expect.objectContaining({ param: 'params.arguments.title' }));
  });

  it('matches JSON.parse on random nested documents split at random bytes (seeded)', () => {
    const rand = seededRandom(23);
    const alphabet = ['a', 'Z', '0', ' ', '/', '"', '\\', '\n', 'é', '€', '😀'];
    const str = () => Array.from({ length: Math.floor(rand() * 6) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    const value = (depth: number): unknown => {
      const r = rand();
      if (depth < 4 && r < 0.2) return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, () => [rand() < 0.3 ? 's' : str(), value(depth + 1)]));
      if (depth < 4 && r < 0.35) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      if (r < 0.6) return str();
      if (r < 0.75) return Math.floor((rand() - 0.5) * 1e6) / 100;
      return rand() < 0.5 ? rand() < 0.5 : null;
    };
    for (let round = 0; round < 300; round++) {
      const doc = { s: str(), v: value(0) };
      const json = JSON.stringify(doc, null, rand() < 0.5 ? 1 : undefined);
      const { kept, events } = nested(json, ['s'], { pieceSize: 1 + Math.floor(rand() * 9) });
      expect(JSON.parse(kept)).toEqual({ ...doc, s: '' });
      expect(events).toContainEqual(['stream', 's', doc.s]);
    }
  });
});
