/** MURMUR_TRUSTED_PROXIES (kit client-address.ts): what Express's `trust proxy` gets, and what is refused at start. */
import { loadConfig, parseTrustedProxies, trustedProxiesSchema } from '@murmur/kit';

describe('MURMUR_TRUSTED_PROXIES', () => {
  it.each<[string, unknown]>([
    ['loopback', ['loopback']],
    ['1', 1],
    ['0', 0],
    ['none', []],
    ['loopback, 10.0.0.0/8,fd00::/8 , 192.0.2.7', ['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.7']],
    ['uniquelocal,linklocal,::1', ['uniquelocal', 'linklocal', '::1']],
  ])('reads %j as %j', (value, expected) => {
    expect(parseTrustedProxies(value)).toEqual(expected);
  });

  it.each(['everyone', '10.0.0.0/33', '::1/129', '10.0.0/8', '11', 'loopback,', '1.2.3.4/8/8', 'true'])('refuses %j at start, naming the variable', (value) => {
    expect(() => loadConfig(trustedProxiesSchema, { MURMUR_TRUSTED_PROXIES: value })).toThrow(/MURMUR_TRUSTED_PROXIES/);
  });

  it('defaults to loopback', () => {
    expect(loadConfig(trustedProxiesSchema, {}).MURMUR_TRUSTED_PROXIES).toEqual(['loopback']);
  });
});
