import { pkceChallenge } from '../src/oauth';
import {
  classifyClientId,
  normalizeClientName,
  normalizeRedirectUris,
  normalizeScopes,
  normalizeScopeString,
  redirectUriProblem,
  redirectUriRegistered,
} from '../src/oauth-validation';

describe('redirect URIs', () => {
  it.each([
    'https://client.example/callback',
    'https://client.example:8443/oauth/callback?app=1',
    'https://localhost/callback',
    'http://localhost/callback',
    'http://localhost:33418/callback',
    'http://127.0.0.1:33418/callback',
    'http://[::1]:33418/callback',
    `https://client.example/${'a'.repeat(2000 - 'https://client.example/'.length)}`,
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'com.example.app:/oauth2redirect',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeNull();
  });

  it.each([
    ['an empty string', ''],
    ['a relative URI', '/callback'],
    ['http on a public host', 'http://client.example/callback'],
    ['http on a host that merely starts with localhost', 'http://localhost.evil.example/callback'],
    ['http on a private address', 'http://192.168.1.10/callback'],
    ['a fragment', 'https://client.example/callback#state'],
    ['an empty fragment', 'https://client.example/callback#'],
    ['a javascript URI', 'javascript:alert(1)'],
    ['a data URI', 'data:text/html,hi'],
    ['a file URI', 'file:///etc/passwd'],
    ['a custom scheme with a fragment', 'myapp://callback#x'],
    ['a custom scheme with credentials', 'myapp://user:pw@callback'],
    ['credentials', 'https://user:secret@client.example/callback'],
    ['a leading space', ' https://client.example/callback'],
    ['an inner space', 'https://client.example/call back'],
    ['2001 characters', `https://client.example/${'a'.repeat(2001 - 'https://client.example/'.length)}`],
  ])('refuses %s', (_name, uri) => {
    expect(redirectUriProblem(uri)).toEqual(expect.any(String));
  });

  it('requires 1 to 10 of them and drops duplicates', () => {
    const uri = (i: number) => `https://client.example/cb${i}`;
    expect(() => normalizeRedirectUris([])).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'redirect_uris' }));
    expect(normalizeRedirectUris(Array.from({ length: 10 }, (_, i) => uri(i)))).toHaveLength(10);
    expect(() => normalizeRedirectUris(Array.from({ length: 11 }, (_, i) => uri(i)))).toThrow(expect.objectContaining({ param: 'redirect_uris' }));
    expect(normalizeRedirectUris([uri(1), uri(2), uri(1)])).toEqual([uri(1), uri(2)]);
  });

  it('names the position of the bad one', () => {
    expect(() => normalizeRedirectUris(['https://client.example/ok', 'http://client.example/bad'])).toThrow(/redirect_uris\[1\]/);
  });

  it.each([
    ['the same URI', 'https://client.example/callback', true],
    ['another path', 'https://client.example/other', false],
    ['a trailing slash more', 'https://client.example/callback/', false],
    ['another query', 'https://client.example/callback?x=1', false],
    ['a loopback URI on another port', 'http://127.0.0.1:50123/callback', true],
    ['a loopback URI without a port', 'http://127.0.0.1/callback', true],
    ['a loopback URI on another path', 'http://127.0.0.1:50123/other', false],
    ['another loopback host', 'http://localhost:33418/callback', false],
    ['https on the loopback host', 'https://127.0.0.1:33418/callback', false],
    ['a registered https loopback URI on another port', 'https://localhost:9999/cb', true],
  ])('matches %s against the registered ones: %s', (_name, presented, expected) => {
    expect(redirectUriRegistered(['https://client.example/callback', 'http://127.0.0.1:33418/callback', 'https://localhost/cb'], presented)).toBe(expected);
  });
});

describe('names, scopes and client ids', () => {
  it('trims a client name and bounds it to 200 characters', () => {
    expect(normalizeClientName('  Claude  ')).toBe('Claude');
    expect(normalizeClientName('x'.repeat(200))).toHaveLength(200);
    for (const bad of ['', '   ', 'x'.repeat(201), 'bad\nname']) {
      expect(() => normalizeClientName(bad)).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'client_name' }));
    }
  });

  it('names a client without a name by its first redirect URI (RFC 7591 makes the name optional)', () => {
    expect(normalizeClientName('', ['https://client.example:8443/cb', 'https://other.example/cb'])).toBe('client.example:8443');
    expect(normalizeClientName(' ', ['cursor://anysphere.cursor-mcp/oauth/callback'])).toBe('anysphere.cursor-mcp');
    expect(normalizeClientName('', ['com.example.app:/cb'])).toBe('com.example.app');
    expect(normalizeClientName('Named', ['https://client.example/cb'])).toBe('Named');
  });

  it.each([
    ['', ''],
    ['read', 'read'],
    ['ai read', 'read ai'],
    [' read  ai read ', 'read ai'],
  ])('canonicalises the registered scope %j as %j', (scope, expected) => {
    expect(normalizeScopeString(scope)).toBe(expected);
  });

  it('refuses an unknown scope, registered or consented', () => {
    expect(() => normalizeScopeString('read write')).toThrow(expect.objectContaining({ param: 'scope', message: expect.stringMatching(/"write"/) }));
    expect(() => normalizeScopes(['read', 'admin'])).toThrow(expect.objectContaining({ param: 'scopes' }));
    expect(() => normalizeScopes([])).toThrow(expect.objectContaining({ param: 'scopes' }));
    expect(normalizeScopes(['ai', 'read', 'ai'])).toEqual(['read', 'ai']);
  });

  it.each([
    ['mcl_0123456789abcdefghijklmn', 'registered'],
    ['https://client.example/oauth/client.json', 'metadata_document'],
  ])('classifies the client id %s', (clientId, kind) => {
    expect(classifyClientId(clientId)).toEqual({ kind, clientId });
  });

  it.each(['', 'client', 'mcl_', 'http://client.example/client.json', 'https://client.example/client.json#x', 'usr_0123456789abcdefghijklmn'])(
    'refuses the client id %j',
    (clientId) => {
      expect(() => classifyClientId(clientId)).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'client_id' }));
    },
  );
});

describe('PKCE', () => {
  it('computes the S256 challenge of RFC 7636 Appendix B', () => {
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});
