/**
 * The contract's check of the redaction options (`redact_pii`, `redact_pii_policies`,
 * `redact_pii_sub`), which the gateway runs before any credit is held: what it accepts, the
 * defaults, and an invalid_request naming the parameter for everything else.
 */
import { DEFAULT_REDACTION_STYLE, MurmurError, REDACTION_POLICIES, REDACTION_STYLES, redactionOptionsOf, type RedactionInput } from '@murmur/contract';

function errorOf(input: RedactionInput): MurmurError {
  try {
    redactionOptionsOf(input);
  } catch (err) {
    if (err instanceof MurmurError) return err;
    throw err;
  }
  throw new Error('expected a MurmurError');
}

describe('redactionOptionsOf', () => {
  it('asks for no redaction when redact_pii is absent or false', () => {
    expect(redactionOptionsOf({})).toBeNull();
    expect(redactionOptionsOf({ redact_pii: false })).toBeNull();
  });

  it('redacts every policy in the default style for redact_pii: true alone', () => {
    expect(redactionOptionsOf({ redact_pii: true })).toEqual({ policies: [...REDACTION_POLICIES], style: 'entity_name' });
    expect(DEFAULT_REDACTION_STYLE).toBe('entity_name');
  });

  it('takes the policies named, in the table order, and a style', () => {
    expect(redactionOptionsOf({ redact_pii: true, redact_pii_policies: ['iban', 'email_address'], redact_pii_sub: 'mask' })).toEqual({ policies: ['email_address', 'iban'], style: 'mask' });
    for (const style of REDACTION_STYLES) expect(redactionOptionsOf({ redact_pii: true, redact_pii_sub: style })?.style).toBe(style);
  });

  it.each<[string, RedactionInput, string, RegExp]>([
    ['redact_pii not a boolean', { redact_pii: 'true' }, 'redact_pii', /must be true or false/],
    ['policies without redact_pii', { redact_pii_policies: ['iban'] }, 'redact_pii_policies', /only applies with `redact_pii: true`/],
    ['policies with redact_pii: false', { redact_pii: false, redact_pii_policies: ['iban'] }, 'redact_pii_policies', /only applies with `redact_pii: true`/],
    ['a style without redact_pii', { redact_pii_sub: 'mask' }, 'redact_pii_sub', /only applies with `redact_pii: true`/],
    ['policies not a list', { redact_pii: true, redact_pii_policies: 'iban' }, 'redact_pii_policies', /must be a list of policy names: "email_address", .*"uk_national_insurance_number"/],
    ['an empty list', { redact_pii: true, redact_pii_policies: [] }, 'redact_pii_policies', /at least one policy \(omit it to redact all of them\)/],
    ['an unknown policy', { redact_pii: true, redact_pii_policies: ['iban', 'passport'] }, 'redact_pii_policies', /holds "passport", which is not a policy; the policies are "email_address", "phone_number", .*"iban"/],
    ['a policy that is not a string', { redact_pii: true, redact_pii_policies: [7] }, 'redact_pii_policies', /holds a number, which is not a policy/],
    ['a null policy', { redact_pii: true, redact_pii_policies: [null] }, 'redact_pii_policies', /holds a null, which is not a policy/],
    ['a repeated policy', { redact_pii: true, redact_pii_policies: ['iban', 'ip_address', 'iban'] }, 'redact_pii_policies', /names "iban" more than once/],
    ['an unknown style', { redact_pii: true, redact_pii_sub: 'hash' }, 'redact_pii_sub', /must be one of "entity_name", "numbered_entity_name", "mask" \(default "entity_name"\)/],
  ])('refuses %s', (_name, input, param, message) => {
    const err = errorOf(input);
    expect(err).toMatchObject({ code: 'invalid_request', param, httpStatus: 400 });
    expect(err.message).toMatch(message);
  });

  it('cuts a long unknown name short in the message', () => {
    expect(errorOf({ redact_pii: true, redact_pii_policies: ['x'.repeat(10_000)] }).message.length).toBeLessThan(400);
  });
});
