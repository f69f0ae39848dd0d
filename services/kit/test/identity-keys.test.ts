/**
 * Workload key material on disk (kit access/identity-keys.ts, identity-store.ts,
 * workload-identity.ts): what each process is given of it (its own private key and the public
 * keys, never another workload's private key), `npm start`'s key store and its move from the
 * layout of earlier versions, and where a process's configuration says its identity is.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WORKLOADS, type Workload } from '@murmur/contract';
import {
  generateWorkloadKeyPair,
  identityFrom,
  identitySourceOf,
  identityStoreAt,
  loadTrustStore,
  migrateIdentityStore,
  prepareIdentityStore,
  signingKeyFromPem,
  TokenMinter,
  TokenVerifier,
} from '@murmur/kit';
import { itIfReal } from '@murmur/kit/testing';

const scratch = (name: string) => mkdtempSync(path.join(tmpdir(), `murmur-${name}-`));
const mode = (file: string) => statSync(file).mode & 0o777;

/** A key store as `npm start` made it before this layout: every `<workload>.key` and `.pub` in one folder. */
function flatStore(): { dir: string; pems: Map<Workload, { privatePem: string; publicPem: string }> } {
  const dir = scratch('flat-store');
  const pems = new Map(WORKLOADS.map((w) => [w, generateWorkloadKeyPair()]));
  for (const [w, p] of pems) {
    writeFileSync(path.join(dir, `${w}.key`), p.privatePem, { mode: 0o600 });
    writeFileSync(path.join(dir, `${w}.pub`), p.publicPem);
  }
  return { dir, pems };
}

describe("npm start's key store", () => {
  it('makes a pair per workload once: public keys in public/, the services\' private keys in private/, the app\'s alone in admin/, owner-only', async () => {
    const root = path.join(scratch('store'), 'identity');
    const first = prepareIdentityStore(root);
    expect(first.made.sort()).toEqual([...WORKLOADS].sort());
    expect(first.moved).toEqual([]);
    const { store } = first;
    expect(readdirSync(store.publicDir).sort()).toEqual(WORKLOADS.map((w) => `${w}.pub`).sort());
    expect(readdirSync(path.join(root, 'private')).sort()).toEqual(WORKLOADS.filter((w) => w !== 'app').map((w) => `${w}.key`).sort());
    expect(readdirSync(path.join(root, 'admin'))).toEqual(['app.key']);
    for (const dir of [root, path.join(root, 'private'), path.join(root, 'admin')]) expect(mode(dir)).toBe(0o700);
    for (const w of WORKLOADS) expect(mode(store.keyFile(w))).toBe(0o600);

    const before = readFileSync(store.keyFile('gateway'), 'utf8');
    expect(prepareIdentityStore(root).made).toEqual([]);
    expect(readFileSync(store.keyFile('gateway'), 'utf8')).toBe(before);

    const gateway = identityFrom({ trustDir: store.publicDir, key: { file: store.keyFile('gateway') } }, 'gateway');
    const token = await gateway.minter.workloadToken('billing');
    expect(await new TokenVerifier('billing', loadTrustStore(store.publicDir, 'billing')).workloadToken(token)).toEqual({ workload: 'gateway', roles: [] });
  });

  it('moves a store of an earlier version into the layout, keeping every key, and leaves no private key beside the public ones', async () => {
    const { dir, pems } = flatStore();
    const { store, moved, made } = prepareIdentityStore(dir);
    expect(moved.sort()).toEqual([...WORKLOADS].sort());
    expect(made).toEqual([]);
    for (const w of WORKLOADS) {
      expect(readFileSync(store.keyFile(w), 'utf8')).toBe(pems.get(w)!.privatePem);
      expect(readFileSync(store.publicFile(w), 'utf8')).toBe(pems.get(w)!.publicPem);
      expect(mode(store.keyFile(w))).toBe(0o600);
    }
    expect(readdirSync(dir).sort()).toEqual(['admin', 'private', 'public']);
    expect(readdirSync(store.publicDir).filter((f) => !f.endsWith('.pub'))).toEqual([]);
    // Tokens signed before the move still verify: the same keys.
    const token = await new TokenMinter(signingKeyFromPem('transcription', pems.get('transcription')!.privatePem)).workloadToken('billing');
    expect(await new TokenVerifier('billing', loadTrustStore(store.publicDir, 'billing')).workloadToken(token)).toEqual({ workload: 'transcription', roles: [] });
    expect(migrateIdentityStore(dir)).toEqual([]);
  });

  it('finishes a move that stopped half-way, and refuses to overwrite a key already at its new place', () => {
    const { dir, pems } = flatStore();
    const store = identityStoreAt(dir);
    mkdirSync(store.publicDir);
    mkdirSync(path.join(dir, 'private'));
    copyFileSync(path.join(dir, 'auth.pub'), store.publicFile('auth'));
    writeFileSync(path.join(dir, 'private', 'billing.key'), pems.get('billing')!.privatePem);
    expect(() => migrateIdentityStore(dir)).toThrow(`both ${path.join(dir, 'auth.pub')} and ${store.publicFile('auth')} exist`);

    const other = flatStore();
    const otherStore = identityStoreAt(other.dir);
    mkdirSync(otherStore.publicDir);
    mkdirSync(path.join(other.dir, 'private'), { mode: 0o700 });
    for (const f of ['auth.key', 'auth.pub']) copyFileSync(path.join(other.dir, f), f.endsWith('.key') ? otherStore.keyFile('auth') : otherStore.publicFile('auth'));
    for (const f of ['auth.key', 'auth.pub']) execFileSync('rm', [path.join(other.dir, f)]);
    expect(prepareIdentityStore(other.dir).moved.sort()).toEqual(WORKLOADS.filter((w) => w !== 'auth').sort());
    expect(readdirSync(other.dir).sort()).toEqual(['admin', 'private', 'public']);
  });
});

describe('what a process loads', () => {
  it('refuses a trust folder holding another workload\'s private key (the layout of earlier versions), naming it', () => {
    const { dir } = flatStore();
    expect(() => identityFrom({ trustDir: dir, key: { file: path.join(dir, 'gateway.key') } }, 'gateway')).toThrow(
      /holds private keys of other workloads \(app\.key, auth\.key, billing\.key, conversion\.key, library\.key, transcription\.key\)/,
    );
    expect(() => loadTrustStore(dir)).toThrow('holds private keys of other workloads');
  });

  it('takes its own key beside the public keys (the chart\'s layout) and from a key file of its own', async () => {
    const { dir, pems } = flatStore();
    const chartLike = scratch('chart-layout');
    for (const w of WORKLOADS) copyFileSync(path.join(dir, `${w}.pub`), path.join(chartLike, `${w}.pub`));
    copyFileSync(path.join(dir, 'library.key'), path.join(chartLike, 'library.key'));
    const library = identityFrom(identitySourceOf({ MURMUR_DATA_DIR: '/nowhere', MURMUR_IDENTITY_DIR: chartLike }, 'library'), 'library');
    expect(library.trust.size).toBe(WORKLOADS.length);
    const publicOnly = scratch('public-only');
    for (const w of WORKLOADS) copyFileSync(path.join(dir, `${w}.pub`), path.join(publicOnly, `${w}.pub`));
    const keyFile = path.join(scratch('key-file'), 'conversion.pem');
    writeFileSync(keyFile, pems.get('conversion')!.privatePem, { mode: 0o600 });
    const conversion = identityFrom({ trustDir: publicOnly, key: { file: keyFile } }, 'conversion');
    // library's folder is not conversion's: it holds library's key.
    expect(() => identityFrom({ trustDir: chartLike, key: { file: keyFile } }, 'conversion')).toThrow('holds private keys of other workloads (library.key)');
    const token = await conversion.minter.workloadToken('library');
    expect(await library.accessControl(async () => ({ userId: '', keyId: '' })).verifier.workloadToken(token)).toEqual({ workload: 'conversion', roles: [] });
  });

  it('reads a key handed over on a descriptor once and closes it', () => {
    const { dir } = flatStore();
    const trust = scratch('trust');
    for (const w of WORKLOADS) copyFileSync(path.join(dir, `${w}.pub`), path.join(trust, `${w}.pub`));
    const fd = openSync(path.join(dir, 'auth.key'), 'r');
    expect(identityFrom({ trustDir: trust, key: { fd } }, 'auth').workload).toBe('auth');
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
  });

  it('refuses a .pub that holds a private key, a key its .pub does not publish, and a missing key, saying where it looked', () => {
    const { dir, pems } = flatStore();
    const trust = scratch('trust');
    for (const w of WORKLOADS) copyFileSync(path.join(dir, `${w}.pub`), path.join(trust, `${w}.pub`));
    const keyFile = path.join(scratch('key'), 'billing.key');
    writeFileSync(keyFile, pems.get('billing')!.privatePem);

    const leaky = scratch('leaky-trust');
    for (const w of WORKLOADS) writeFileSync(path.join(leaky, `${w}.pub`), w === 'app' ? pems.get('app')!.privatePem : pems.get(w)!.publicPem);
    expect(() => identityFrom({ trustDir: leaky, key: { file: keyFile } }, 'billing')).toThrow(`${path.join(leaky, 'app.pub')}: a private key where a public key belongs`);

    const otherKey = path.join(scratch('key'), 'billing.key');
    writeFileSync(otherKey, generateWorkloadKeyPair().privatePem);
    expect(() => identityFrom({ trustDir: trust, key: { file: otherKey } }, 'billing')).toThrow(`the private key of billing (${otherKey}) is not the one ${trust}/billing.pub publishes`);

    expect(() => identityFrom({ trustDir: trust, key: { file: path.join(trust, 'library.key') } }, 'library')).toThrow(`no workload key of library at ${path.join(trust, 'library.key')}`);
  });
});

describe('where the configuration says a process\'s identity is', () => {
  const store = () => prepareIdentityStore(path.join(scratch('cfg-store'), 'identity')).store;

  it.each([
    ['a folder of public keys: its own key beside them', (s: ReturnType<typeof store>) => ({ MURMUR_IDENTITY_DIR: s.publicDir }), 'billing', (s: ReturnType<typeof store>) => ({ trustDir: s.publicDir, key: { file: `${s.publicDir}/billing.key` } })],
    ['the launcher\'s hand-over: the public folder and a descriptor', (s: ReturnType<typeof store>) => ({ MURMUR_IDENTITY_DIR: s.publicDir, MURMUR_IDENTITY_KEY_FD: 3 }), 'billing', (s: ReturnType<typeof store>) => ({ trustDir: s.publicDir, key: { fd: 3 } })],
    ['a key file of its own', (s: ReturnType<typeof store>) => ({ MURMUR_IDENTITY_DIR: s.publicDir, MURMUR_IDENTITY_KEY_FILE: '/run/keys/billing.key' }), 'billing', (s: ReturnType<typeof store>) => ({ trustDir: s.publicDir, key: { file: '/run/keys/billing.key' } })],
    ['the key store with a key file: its public folder', (s: ReturnType<typeof store>) => ({ MURMUR_IDENTITY_DIR: s.root, MURMUR_IDENTITY_KEY_FILE: '/run/keys/billing.key' }), 'billing', (s: ReturnType<typeof store>) => ({ trustDir: s.publicDir, key: { file: '/run/keys/billing.key' } })],
    ['the admin CLI beside npm start: the store\'s admin/app.key', (s: ReturnType<typeof store>) => ({ MURMUR_IDENTITY_DIR: s.root }), 'app', (s: ReturnType<typeof store>) => ({ trustDir: s.publicDir, key: { file: s.keyFile('app') } })],
  ] as const)('%s', (_, cfg, workload, expected) => {
    const s = store();
    expect(identitySourceOf({ MURMUR_DATA_DIR: '/nowhere', ...cfg(s) }, workload)).toEqual(expected(s));
  });

  it('defaults to npm start\'s store under MURMUR_DATA_DIR, and points no service at it', () => {
    const data = scratch('data');
    const s = prepareIdentityStore(path.join(data, 'identity')).store;
    expect(identitySourceOf({ MURMUR_DATA_DIR: `${data}/` }, 'app')).toEqual({ trustDir: s.publicDir, key: { file: s.keyFile('app') } });
    expect(() => identitySourceOf({ MURMUR_DATA_DIR: data }, 'transcription')).toThrow(`is npm start's key store, which hands transcription its own key`);
  });

  it('moves a store of an earlier version when the admin CLI is pointed at it, and only then', () => {
    const { dir, pems } = flatStore();
    expect(() => identitySourceOf({ MURMUR_DATA_DIR: '/nowhere', MURMUR_IDENTITY_DIR: dir }, 'gateway')).not.toThrow();
    expect(existsSync(path.join(dir, 'gateway.key'))).toBe(true); // a service does not move it: it refuses it when loading
    const source = identitySourceOf({ MURMUR_DATA_DIR: '/nowhere', MURMUR_IDENTITY_DIR: dir }, 'app');
    expect(source).toEqual({ trustDir: path.join(dir, 'public'), key: { file: path.join(dir, 'admin', 'app.key') } });
    expect(readFileSync(path.join(dir, 'admin', 'app.key'), 'utf8')).toBe(pems.get('app')!.privatePem);
    expect(identityFrom(source, 'app', ['admin']).workload).toBe('app');
  });

  const opensslMissing = (() => {
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
      return undefined;
    } catch {
      return 'openssl is not installed (apt-get install openssl)';
    }
  })();
  itIfReal(opensslMissing, 'accepts an RSA key (PKCS#1, as sprig writes it) with a self-signed X.509 certificate as its public key', async () => {
    const dir = scratch('rsa');
    const pem = path.join(scratch('rsa-pkcs8'), 'k.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', pem, '-out', path.join(dir, 'auth.pub'), '-days', '1', '-subj', '/CN=auth.murmur.internal'], { stdio: 'ignore' });
    execFileSync('openssl', ['rsa', '-in', pem, '-traditional', '-out', path.join(dir, 'auth.key')], { stdio: 'ignore' });
    expect(readFileSync(path.join(dir, 'auth.key'), 'utf8')).toMatch(/BEGIN RSA PRIVATE KEY/);
    const auth = identityFrom(identitySourceOf({ MURMUR_DATA_DIR: '/nowhere', MURMUR_IDENTITY_DIR: dir }, 'auth'), 'auth');
    expect(auth.minter.workload).toBe('auth');
    const signing = signingKeyFromPem('auth', readFileSync(path.join(dir, 'auth.key'), 'utf8'));
    expect(signing.alg).toBe('RS256');
    const token = await new TokenMinter(signing).principalAssertion('library', { userId: 'usr_a', keyId: 'key_a' });
    expect(await new TokenVerifier('library', loadTrustStore(dir, 'auth')).principalAssertion(token)).toEqual({ userId: 'usr_a', keyId: 'key_a', scopes: [], issuer: 'auth' });
  });
});
