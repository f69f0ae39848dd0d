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

  it('writes the binding nowhere in the cursor', () => {
    const cursor = codec.encode(payload, 'usr_alice');
    expect(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()).not.toContain('usr_alice');
    expect(cursor).not.toContain('usr_alice');
  });
});
