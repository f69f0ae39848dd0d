import { parseAuthorization } from '@murmur/auth';

const hex = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const key = `svc_${hex}`;
const token = `mat_${'Ab0_-'.repeat(8)}xyz`;

describe('parseAuthorization', () => {
  it.each<[string, string | undefined, { ok: true; key: string } | { ok: false; code: string }]>([
    ['accepts the canonical form', `Bearer ${key}`, { ok: true, key }],
    ['accepts a lowercase scheme', `bearer ${key}`, { ok: true, key }],
    ['accepts an uppercase scheme', `BEARER ${key}`, { ok: true, key }],
    ['ignores surrounding and repeated whitespace', `  Bearer \t ${key}  `, { ok: true, key }],
    ['treats an absent header as missing', undefined, { ok: false, code: 'missing_api_key' }],
    ['treats an empty header as missing', '', { ok: false, code: 'missing_api_key' }],
    ['treats a whitespace-only header as missing', ' \t\n ', { ok: false, code: 'missing_api_key' }],
    ['treats a scheme without a token as missing', 'Bearer  ', { ok: false, code: 'missing_api_key' }],
    ['rejects the Basic scheme', `Basic ${key}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects the Token scheme', `Token ${key}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects a bare key without a scheme', key, { ok: false, code: 'invalid_api_key' }],
    ['rejects extra parts after the key', `Bearer ${key} extra`, { ok: false, code: 'invalid_api_key' }],
    ['rejects a scheme glued to the key', `Bearer:${key}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects 63 hex characters', `Bearer svc_${hex.slice(1)}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects 65 hex characters', `Bearer svc_${hex}0`, { ok: false, code: 'invalid_api_key' }],
    ['rejects a non-hex character', `Bearer svc_${hex.slice(1)}g`, { ok: false, code: 'invalid_api_key' }],
    ['rejects uppercase hex', `Bearer svc_${hex.toUpperCase()}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects an uppercase prefix', `Bearer SVC_${hex}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects another prefix', `Bearer sk_${hex}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects the prefix alone', 'Bearer svc_', { ok: false, code: 'invalid_api_key' }],
    ['accepts the shape of an OAuth access token', `Bearer ${token}`, { ok: true, key: token }],
    ['rejects an access token one character short', `Bearer ${token.slice(0, -1)}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects a refresh token as a bearer token', `Bearer mrt_${token.slice(4)}`, { ok: false, code: 'invalid_api_key' }],
    ['rejects an authorization code as a bearer token', `Bearer mac_${token.slice(4)}`, { ok: false, code: 'invalid_api_key' }],
  ])('%s', (_name, header, expected) => {
    expect(parseAuthorization(header)).toEqual(expected);
  });
});
