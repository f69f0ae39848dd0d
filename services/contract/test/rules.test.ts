/**
 * The rules that were written more than once (issue 31: page size in four places with four
 * messages, the idempotency key's charset checked by only some, user ids refused three ways):
 * each is one function now, table-tested here once for every caller.
 */
import { checkIdempotencyKey, DEFAULT_PAGE_LIMIT, isIdempotencyKey, MAX_PAGE_LIMIT, MurmurError, pageSizeOf, requireId } from '@murmur/contract';

function errorOf(fn: () => unknown): MurmurError {
  try {
    fn();
  } catch (err) {
    if (err instanceof MurmurError) return err;
    throw err;
  }
  throw new Error('expected a MurmurError');
}

describe('pageSizeOf', () => {
  it.each<[number | undefined, boolean, number]>([
    [undefined, true, DEFAULT_PAGE_LIMIT],
    [undefined, false, DEFAULT_PAGE_LIMIT],
    [0, true, DEFAULT_PAGE_LIMIT],
    [1, true, 1],
    [57, false, 57],
    [MAX_PAGE_LIMIT, true, MAX_PAGE_LIMIT],
    [MAX_PAGE_LIMIT, false, MAX_PAGE_LIMIT],
  ])('takes %p (0 means the default: %p) as %p', (input, zeroMeansDefault, expected) => {
    expect(pageSizeOf(input, 'limit', { zeroMeansDefault })).toBe(expected);
  });

  it.each<[number, boolean]>([
    [0, false],
    [-1, true],
    [101, true],
    [1000, false],
    [2.5, true],
    [Number.NaN, true],
  ])('refuses %p (0 means the default: %p) with one message naming the parameter', (input, zeroMeansDefault) => {
    for (const param of ['limit', 'page_size', 'recent_limit']) {
      expect(errorOf(() => pageSizeOf(input, param, { zeroMeansDefault }))).toMatchObject({
        code: 'invalid_request',
        param,
        message: `\`${param}\` must be an integer from 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`,
      });
    }
  });
});

describe('idempotency keys', () => {
  it.each([
    ['a UUID', '7c0e7f6e-3b1a-4d52-9a4e-2f1f5f6b8c21', true],
    ['one character', 'k', true],
    ['255 characters', 'k'.repeat(255), true],
    ['every printable ASCII character', Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join(''), true],
    ['nothing', '', false],
    ['256 characters', 'k'.repeat(256), false],
    ['a space', 'two words', false],
    ['a tab', 'a\tb', false],
    ['DEL', 'a\x7fb', false],
    ['non-ASCII', 'clé', false],
  ])('%s: accepted %p', (_name, key, accepted) => {
    expect(isIdempotencyKey(key as string)).toBe(accepted);
    if (accepted) expect(checkIdempotencyKey(key as string, 'Idempotency-Key')).toBe(key);
    else expect(errorOf(() => checkIdempotencyKey(key as string, 'idempotency_key'))).toMatchObject({ code: 'invalid_request', param: 'idempotency_key' });
  });
});

describe('requireId', () => {
  it.each<[string, string, string]>([
    ['an empty id', 'usr', ''],
    ['another prefix', 'usr', 'key_0123456789abcdefghijklmn'],
    ['a bare word', 'key', 'nope'],
    ['uppercase characters', 'usr', 'usr_0123456789ABCDEFGHIJKLMN'],
    ['SQL', 'usr', "usr_1' OR '1'='1"],
  ])('refuses %s as a malformed id', (_name, prefix, value) => {
    expect(errorOf(() => requireId(prefix, value, 'some_id'))).toMatchObject({ code: 'invalid_request', param: 'some_id', message: `some_id must be an id of the form ${prefix}_….` });
  });

  it('accepts an id of the right prefix and shape', () => {
    expect(requireId('usr', 'usr_0123456789abcdefghijklmn', 'user_id')).toBe('usr_0123456789abcdefghijklmn');
  });
});
