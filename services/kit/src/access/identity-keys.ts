/**
 * Workload key material. Each workload has a key pair: the private key signs its workload
 * tokens (and, for principal issuers, its principal assertions); every process trusts the
 * public keys of all workloads. On disk, one folder (MURMUR_IDENTITY_DIR):
 *
 *   <workload>.key   its private key, PEM (PKCS#8, or PKCS#1 for RSA); readable by its owner only
 *   <workload>.pub   its public key, PEM: a SubjectPublicKeyInfo or an X.509 certificate
 *
 * `npm start` makes Ed25519 pairs for every workload on first run (generateIdentityFiles); the
 * Helm chart writes a self-signed RSA certificate per workload and gives each pod its own private
 * key only. A process holds just its own `.key`; holding another's would let it speak as that
 * workload.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isWorkload, WORKLOADS, type Workload } from './workloads';

/** JWS algorithm of a key: EdDSA for Ed25519, RS256 for RSA, ES256 for P-256. */
export type SigningAlg = 'EdDSA' | 'RS256' | 'ES256';

export interface SigningKey {
  workload: Workload;
  key: KeyObject;
  alg: SigningAlg;
}

/** Public keys of the workloads a process trusts. */
export type TrustStore = ReadonlyMap<Workload, { key: KeyObject; alg: SigningAlg }>;

function algOf(key: KeyObject): SigningAlg {
  switch (key.asymmetricKeyType) {
    case 'ed25519':
      return 'EdDSA';
    case 'rsa':
      return 'RS256';
    case 'ec':
      if (key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
      break;
  }
  throw new Error(`unsupported workload key type ${key.asymmetricKeyType}: use Ed25519, RSA or EC P-256`);
}

/** A public key from PEM: a SubjectPublicKeyInfo or an X.509 certificate. */
export function publicKeyFromPem(pem: string): KeyObject {
  return pem.includes('BEGIN CERTIFICATE') ? new X509Certificate(pem).publicKey : createPublicKey(pem);
}

/** The signing key of `workload` from its PEM private key. */
export function signingKeyFromPem(workload: Workload, pem: string): SigningKey {
  const key = createPrivateKey(pem);
  return { workload, key, alg: algOf(key) };
}

export function trustStoreOf(keys: Iterable<[Workload, KeyObject]>): TrustStore {
  const store = new Map<Workload, { key: KeyObject; alg: SigningAlg }>();
  for (const [w, key] of keys) store.set(w, { key, alg: algOf(key) });
  return store;
}

/** Every `<workload>.pub` in `dir` (other files are ignored). */
export function loadTrustStore(dir: string): TrustStore {
  const entries: [Workload, KeyObject][] = [];
  for (const file of existsSync(dir) ? readdirSync(dir) : []) {
    const name = file.endsWith('.pub') ? file.slice(0, -4) : '';
    if (isWorkload(name)) entries.push([name, publicKeyFromPem(readFileSync(join(dir, file), 'utf8'))]);
  }
  return trustStoreOf(entries);
}

/** `<workload>.key` from `dir`, or undefined when there is none. */
export function loadSigningKey(dir: string, workload: Workload): SigningKey | undefined {
  const file = join(dir, `${workload}.key`);
  return existsSync(file) ? signingKeyFromPem(workload, readFileSync(file, 'utf8')) : undefined;
}

/** A fresh Ed25519 pair as PEM. */
export function generateWorkloadKeyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Makes the key pair of every workload that has none in `dir` (first start of `npm start`);
 * existing pairs are kept. Private keys are written 0600.
 */
export function generateIdentityFiles(dir: string): Workload[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const made: Workload[] = [];
  for (const w of WORKLOADS) {
    const keyFile = join(dir, `${w}.key`);
    if (existsSync(keyFile) && existsSync(join(dir, `${w}.pub`))) continue;
    const pair = generateWorkloadKeyPair();
    writeFileSync(keyFile, pair.privatePem, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    writeFileSync(join(dir, `${w}.pub`), pair.publicPem);
    made.push(w);
  }
  return made;
}
