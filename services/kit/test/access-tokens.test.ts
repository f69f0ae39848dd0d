/**
 * Workload tokens and principal assertions (kit access/tokens.ts): what verifies, and every way a
 * token can be wrong — each refused.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { WORKLOAD_ROLES } from '@murmur/contract';
import { TokenMinter, TokenRejected, TokenVerifier, type SigningKey } from '@murmur/kit';
import { handMadeJwt, testMinter, testSigningKey, testTrust } from '@murmur/kit/testing';

const now = () => Math.floor(Date.now() / 1000);

async function handMade(key: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  return handMadeJwt(header, claims, key);
}

const library = () => new TokenVerifier('library', testTrust());
const PRINCIPAL = { typ: 'murmur-principal+jwt', kid: 'gateway' };
const WORKLOAD = { typ: 'murmur-workload+jwt', kid: 'gateway' };
const assertionClaims = (over: Record<string, unknown> = {}) => ({ iss: 'gateway', sub: 'usr_a', key: 'key_a', aud: 'library', iat: now(), exp: now() + 30, ...over });
const workloadClaims = (over: Record<string, unknown> = {}) => ({ iss: 'gateway', sub: 'gateway', aud: 'library', iat: now(), exp: now() + 300, ...over });

describe('tokens that verify', () => {
  it("verifies a workload token for its audience, with the workload's roles", async () => {
    expect(await library().workloadToken(await testMinter('gateway').workloadToken('library'))).toEqual({ workload: 'gateway', roles: [] });
    expect(await library().workloadToken(await testMinter('app').workloadToken('library'))).toEqual({ workload: 'app', roles: ['admin'] });
  });

  it('verifies a principal assertion from the gateway and from auth', async () => {
    for (const issuer of ['gateway', 'auth'] as const) {
      const token = await testMinter(issuer).principalAssertion('library', { userId: 'usr_a', keyId: 'key_a' });
      expect(await library().principalAssertion(token)).toEqual({ userId: 'usr_a', keyId: 'key_a', scopes: [], issuer });
    }
  });

  it("carries what the user's key may do, and mints another assertion for another set of scopes", async () => {
    const minter = testMinter('gateway');
    const readOnly = await minter.principalAssertion('library', { userId: 'usr_a', keyId: 'key_a', scopes: ['read'] });
    expect(await library().principalAssertion(readOnly)).toEqual({ userId: 'usr_a', keyId: 'key_a', scopes: ['read'], issuer: 'gateway' });
    const full = await minter.principalAssertion('library', { userId: 'usr_a', keyId: 'key_a', scopes: ['read', 'ai'] });
    expect(full).not.toBe(readOnly);
    expect((await library().principalAssertion(full)).scopes).toEqual(['read', 'ai']);
  });

  it('reuses a minted token within half its life, and a new user gets a new assertion', async () => {
    const minter = testMinter('gateway');
    expect(await minter.workloadToken('billing')).toBe(await minter.workloadToken('billing'));
    const a = await minter.principalAssertion('billing', { userId: 'usr_a', keyId: 'k' });
    expect(await minter.principalAssertion('billing', { userId: 'usr_a', keyId: 'k' })).toBe(a);
    expect(await minter.principalAssertion('billing', { userId: 'usr_b', keyId: 'k' })).not.toBe(a);
  });

  it('refuses to mint what a workload may not: assertions from conversion, the admin role for the gateway', () => {
    expect(() => testMinter('conversion').principalAssertion('library', { userId: 'usr_a', keyId: 'k' })).toThrow(/does not issue principal assertions/);
    expect(() => new TokenMinter(testSigningKey('gateway'), ['admin'])).toThrow(/may not hold role admin/);
    expect(WORKLOAD_ROLES.app).toEqual(['admin']);
  });
});

describe('tokens that are refused', () => {
  const stranger = generateKeyPairSync('ed25519').privateKey;
  const cases: Array<[string, () => Promise<{ kind: 'workload' | 'assertion'; token: string }>]> = [
    ['an assertion signed by a key no one trusts', async () => ({ kind: 'assertion', token: await handMade(stranger, PRINCIPAL, assertionClaims()) })],
    ['a workload token signed by a key no one trusts', async () => ({ kind: 'workload', token: await handMade(stranger, WORKLOAD, workloadClaims()) })],
    ['an expired assertion', async () => ({ kind: 'assertion', token: await handMade(testSigningKey('gateway').key, PRINCIPAL, assertionClaims({ iat: now() - 100, exp: now() - 70 })) })],
    ['an assertion issued in the future', async () => ({ kind: 'assertion', token: await handMade(testSigningKey('gateway').key, PRINCIPAL, assertionClaims({ iat: now() + 60, exp: now() + 90 })) })],
    ['an assertion for another service', async () => ({ kind: 'assertion', token: await testMinter('gateway').principalAssertion('billing', { userId: 'usr_a', keyId: 'k' }) })],
    ['a workload token presented as an assertion', async () => ({ kind: 'assertion', token: await testMinter('gateway').workloadToken('library') })],
    ['an assertion presented as a workload token', async () => ({ kind: 'workload', token: await testMinter('gateway').principalAssertion('library', { userId: 'usr_a', keyId: 'k' }) })],
    ['an assertion from a workload that may not issue them', async () => ({ kind: 'assertion', token: await handMade(testSigningKey('conversion').key, { ...PRINCIPAL, kid: 'conversion' }, assertionClaims({ iss: 'conversion' })) })],
    ['an assertion whose scope is not a string', async () => ({ kind: 'assertion', token: await handMade(testSigningKey('gateway').key, PRINCIPAL, assertionClaims({ scope: ['ai'] })) })],
    ["a kid that is not the issuer (gateway's key, claiming auth)", async () => ({ kind: 'assertion', token: await handMade(testSigningKey('gateway').key, PRINCIPAL, assertionClaims({ iss: 'auth' })) })],
    ['a workload token naming another subject', async () => ({ kind: 'workload', token: await handMade(testSigningKey('gateway').key, WORKLOAD, workloadClaims({ sub: 'app' })) })],
    ['a role the workload does not hold', async () => ({ kind: 'workload', token: await handMade(testSigningKey('gateway').key, WORKLOAD, workloadClaims({ roles: ['admin'] })) })],
    ['an assertion living longer than 30 s', async () => ({ kind: 'assertion', token: await handMade(testSigningKey('gateway').key, PRINCIPAL, assertionClaims({ exp: now() + 3600 })) })],
    ['an assertion without a user', async () => ({ kind: 'assertion', token: await handMade(testSigningKey('gateway').key, PRINCIPAL, assertionClaims({ sub: '' })) })],
    ['alg none', async () => ({ kind: 'assertion', token: handMadeJwt({ alg: 'none', ...PRINCIPAL }, assertionClaims()) })],
    ['HS256 with a made-up secret', async () => ({ kind: 'assertion', token: handMadeJwt({ alg: 'HS256', ...PRINCIPAL }, assertionClaims(), Buffer.alloc(32, 1)) })],
    ['garbage', async () => ({ kind: 'workload', token: 'not.a.jwt' })],
  ];

  it.each(cases)('refuses %s', async (_name, make) => {
    const { kind, token } = await make();
    const v = library();
    const verify = kind === 'workload' ? v.workloadToken(token) : v.principalAssertion(token);
    await expect(verify).rejects.toBeInstanceOf(TokenRejected);
  });

  it('refuses an RS256 token signed with an Ed25519-trusted workload name (alg must match the trusted key)', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const signing: SigningKey = { workload: 'gateway', key: rsa.privateKey, alg: 'RS256' };
    const token = await new TokenMinter(signing).workloadToken('library');
    await expect(library().workloadToken(token)).rejects.toBeInstanceOf(TokenRejected);
  });
});
