import { createHmac } from 'node:crypto';
import { MurmurError } from '@murmur/contract';
import { CursorCodec } from '@murmur/kit';

const isAny = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function errorOf(fn: () => unknown): MurmurError | undefined {
  try {
    fn();
  } catch (err) {
    return err as MurmurError;
  }
  return undefined;
}

describe('CursorCodec', () => {
  const codec = new CursorCodec('kit-test-secret-0123456789');
  const payload = { t: 1, i: 'rec_x' };

  it('decodes a cursor with the binding it was issued with', () => {
    expect(codec.decode(codec.encode(payload, 'usr_alice'), isAny, 'usr_alice')).toEqual(payload);
    expect(codec.decode(codec.encode(payload), isAny)).toEqual(payload);
  });

  it.each<[string, string, string]>([
    ['another owner', 'usr_alice', 'usr_bob'],
    ['no binding where one was issued', 'usr_alice', ''],
    ['a binding where none was issued', '', 'usr_alice'],
    ['a binding that only differs by where the separator falls', 'usr_a', 'usr_a:'],
  ])('refuses a cursor presented by %s, as invalid_request on "cursor"', (_name, issued, presented) => {
    const err = errorOf(() => codec.decode(codec.encode(payload, issued), isAny, presented));
    expect(err).toBeInstanceOf(MurmurError);
    expect(err).toMatchObject({ code: 'invalid_request', param: 'cursor' });
  });

  it('signs as it always has, so cursors already handed out still decode', () => {
    // HMAC-SHA256 keyed with the secret's UTF-8 bytes over "<binding length>:<binding>:<body>",
    // base64url, first 22 characters (the body alone when unbound).
    const cursor = codec.encode(payload, 'usr_alice');
    const [body, sig] = cursor.split('.');
    expect(sig).toBe(createHmac('sha256', 'kit-test-secret-0123456789').update(`9:usr_alice:${body}`).digest('base64url').slice(0, 22));
    const unbound = codec.encode(payload).split('.');
    expect(unbound[1]).toBe(createHmac('sha256', 'kit-test-secret-0123456789').update(unbound[0]!).digest('base64url').slice(0, 22));
  });

  it('writes the binding nowhere in the cursor', () => {
    const cursor = codec.encode(payload, 'usr_alice');
    expect(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()).not.toContain('usr_alice');
    expect(cursor).not.toContain('usr_alice');
  });
});
