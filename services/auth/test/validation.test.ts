import { normalizeEmail, normalizeKeyName, normalizeUserName } from '../src/validation';

const rejects = (fn: () => unknown, param: string) => expect(fn).toThrow(expect.objectContaining({ code: 'invalid_request', param }));

describe('input rules', () => {
  it.each([
    ['Ada@Example.COM', 'ada@example.com'],
    ['  ada@example.com ', 'ada@example.com'],
    ['ada+notes@mail.example.co.uk', 'ada+notes@mail.example.co.uk'],
  ])('normalises the email %j to %j', (input, expected) => {
    expect(normalizeEmail(input)).toBe(expected);
  });

  it.each([
    ['nothing', ''],
    ['only spaces', '   '],
    ['no @', 'ada'],
    ['no domain', 'ada@'],
    ['no local part', '@example.com'],
    ['a domain without a dot', 'ada@example'],
    ['two @', 'ada@@example.com'],
    ['inner whitespace', 'a da@example.com'],
    ['a trailing dot', 'ada@example.'],
    ['a leading dot in the domain', 'ada@.com'],
    ['over 254 characters', `${'a'.repeat(250)}@x.io`],
  ])('rejects an email with %s', (_name, input) => rejects(() => normalizeEmail(input), 'email'));

  it.each([
    ['', ''],
    ['  Ada Lovelace ', 'Ada Lovelace'],
  ])('accepts the user name %j as %j', (input, expected) => {
    expect(normalizeUserName(input)).toBe(expected);
  });

  it.each([
    ['over 200 characters', 'x'.repeat(201)],
    ['with a control character', 'Ada\u0000'],
  ])('rejects a user name %s', (_name, input) => rejects(() => normalizeUserName(input), 'name'));

  it('accepts a key name up to 100 characters, trimmed', () => {
    expect(normalizeKeyName('  CI pipeline ')).toBe('CI pipeline');
    expect(normalizeKeyName('k'.repeat(100))).toBe('k'.repeat(100));
  });

  it.each([
    ['that is empty', ''],
    ['of spaces only', '   '],
    ['over 100 characters', 'k'.repeat(101)],
    ['with a newline', 'bad\nname'],
  ])('rejects a key name %s', (_name, input) => rejects(() => normalizeKeyName(input), 'name'));
});
