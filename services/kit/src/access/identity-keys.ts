/**
 * Workload key material. Each workload has a key pair: the private key signs its workload
 * tokens (and, for principal issuers, its principal assertions); every process trusts the
 * public keys of all workloads. A process is given two things (docs/authorization.md#keys):
 *
 *   a trust folder   every `<workload>.pub` (PEM: a SubjectPublicKeyInfo or an X.509
 *                    certificate); it may also hold the process's own `<workload>.key` (the
 *                    chart's layout: one mounted folder), and no other private key
 *   its own key      `<workload>.key` in that folder, a file of its own, or an inherited
 *                    descriptor the launcher wrote it to (PEM: PKCS#8, or PKCS#1 for RSA)
 *
 * A trust folder holding another workload's `.key`, or a `.pub` holding a private key, is refused
 * before anything is read from it: a process holding another's key could speak as that workload.
 * `npm start`'s store of every workload's key is identity-store.ts.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { closeSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isWorkload, type Workload } from '@murmur/contract';

/** JWS algorithm of a key: EdDSA for Ed25519, RS256 for RSA, ES256 for P-256. */
export type SigningAlg = 'EdDSA' | 'RS256' | 'ES256';

export interface SigningKey {
  workload: Workload;
  key: KeyObject;
  alg: SigningAlg;
}

/** Public keys of the workloads a process trusts. */
export type TrustStore = ReadonlyMap<Workload, { key: KeyObject; alg: SigningAlg }>;

/** Where a process's own private key is: a file, or a descriptor it inherited (read once, then closed). */
export type KeySource = { file: string } | { fd: number };

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

/** Whether PEM text holds a private key (PKCS#8, PKCS#1, SEC1, encrypted or not). */
export function holdsPrivateKey(pem: string): boolean {
  return /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem);
}

/** A public key from PEM: a SubjectPublicKeyInfo or an X.509 certificate; never a private key. */
export function publicKeyFromPem(pem: string): KeyObject {
  // createPublicKey would derive the public half of a private key, and so hold the private one.
  if (holdsPrivateKey(pem)) throw new Error('a private key where a public key belongs');
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

/**
 * Every `<workload>.pub` in `dir` (other files are ignored). `own` is the workload loading it:
 * its own `<own>.key` may sit beside the public keys; any other `.key` there, or a `.pub`
 * holding a private key, fails the load before a public key is read, naming the file.
 */
export function loadTrustStore(dir: string, own?: Workload): TrustStore {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  const foreign = files.filter((f) => f.endsWith('.key') && f !== `${own}.key`);
  if (foreign.length > 0) {
    throw new Error(
      `${dir} holds private keys of other workloads (${foreign.join(', ')}): a process is given its own key only; point MURMUR_IDENTITY_DIR at a folder of public keys (docs/authorization.md#keys)`,
    );
  }
  const entries: [Workload, KeyObject][] = [];
  for (const file of files) {
    const name = file.endsWith('.pub') ? file.slice(0, -4) : '';
    if (!isWorkload(name)) continue;
    try {
      entries.push([name, publicKeyFromPem(readFileSync(join(dir, file), 'utf8'))]);
    } catch (err) {
      throw new Error(`${join(dir, file)}: ${(err as Error).message}`);
    }
  }
  return trustStoreOf(entries);
}

/** The PEM text of a key source; a descriptor is read to its end and closed, so nothing this process starts inherits it. */
function readKeySource(from: KeySource): string {
  if ('file' in from) return readFileSync(from.file, 'utf8');
  try {
    return readFileSync(from.fd, 'utf8');
  } finally {
    try {
      closeSync(from.fd);
    } catch {
      // EBADF: no such descriptor was inherited; the read above says so
    }
  }
}

/** Where a key source is, for messages (never its content). */
export function describeKeySource(from: KeySource): string {
  return 'file' in from ? from.file : `descriptor ${from.fd}`;
}

/** `workload`'s signing key from `from`, or undefined when that file does not exist. */
export function loadSigningKey(from: KeySource, workload: Workload): SigningKey | undefined {
  if ('file' in from && !existsSync(from.file)) return undefined;
  const pem = readKeySource(from);
  if (!pem.trim()) throw new Error(`no private key of ${workload} on ${describeKeySource(from)}`);
  return signingKeyFromPem(workload, pem);
}

/** Whether a private key is the one whose public half is `publicKey` (a `.pub` that belongs to it). */
export function keysMatch(privateKey: KeyObject, publicKey: KeyObject): boolean {
  const der = (k: KeyObject) => k.export({ type: 'spki', format: 'der' });
  return der(createPublicKey(privateKey)).equals(der(publicKey));
}

/** A fresh Ed25519 pair as PEM. */
export function generateWorkloadKeyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
