/**
 * A process's identity as a whole: its workload name, its signing key (to mint its tokens) and
 * the trust store (to check everyone else's). Every main.ts loads one from its configuration
 * (loadWorkloadIdentity); tests make them with `testIdentities()` from @murmur/kit/testing.
 */
import { auth } from '@murmur/proto';
import type { PromiseClient } from '../grpc-client';
import { MurmurError, type Role, type Workload } from '@murmur/contract';
import type { AccessControl, KeyVerifier } from './access-control';
import { describeKeySource, keysMatch, loadSigningKey, loadTrustStore, type KeySource, type SigningKey, type TrustStore } from './identity-keys';
import { identityStoreAt, isFlatIdentityStore, isIdentityStore, migrateIdentityStore } from './identity-store';
import { TokenMinter, TokenVerifier } from './tokens';

export class WorkloadIdentity {
  readonly minter: TokenMinter;

  constructor(
    signing: SigningKey,
    readonly trust: TrustStore,
    roles: readonly Role[] = [],
  ) {
    this.minter = new TokenMinter(signing, roles);
  }

  get workload(): Workload {
    return this.minter.workload;
  }

  /** The access control of a server run by this workload, with `verifyKey` for callers who send a developer key. */
  accessControl(verifyKey: KeyVerifier): AccessControl {
    return { verifier: new TokenVerifier(this.workload, this.trust), verifyKey };
  }
}

/** Where a process finds its identity: the folder of public keys it trusts, and its own private key. */
export interface IdentitySource {
  trustDir: string;
  key: KeySource;
}

/** The identity variables every process reads (kit config.ts storageSchema). */
export interface IdentityConfig {
  MURMUR_DATA_DIR: string;
  MURMUR_IDENTITY_DIR?: string | undefined;
  MURMUR_IDENTITY_KEY_FILE?: string | undefined;
  MURMUR_IDENTITY_KEY_FD?: number | undefined;
}

/** MURMUR_IDENTITY_DIR, or where `npm start` keeps its key store: MURMUR_DATA_DIR/identity. */
export function identityDirOf(cfg: Pick<IdentityConfig, 'MURMUR_DATA_DIR' | 'MURMUR_IDENTITY_DIR'>): string {
  return cfg.MURMUR_IDENTITY_DIR ?? `${cfg.MURMUR_DATA_DIR.replace(/\/+$/, '')}/identity`;
}

/**
 * Where `workload`'s identity is, from its configuration. MURMUR_IDENTITY_DIR names either a
 * folder of public keys (which may hold the process's own `<workload>.key`: the chart's layout)
 * or `npm start`'s key store (identity-store.ts), whose `public/` is then the trust folder and
 * whose `admin/app.key` is the app's key. Its private key comes from MURMUR_IDENTITY_KEY_FD (the
 * launcher's hand-over), else MURMUR_IDENTITY_KEY_FILE, else the folder. A service or the gateway
 * pointed at the key store with neither is refused: the launcher hands it its own key, and
 * nothing points it at the others'. Only the app (the admin CLI) moves a store of an earlier
 * version into the layout, as `npm start` does, so both keep working after an upgrade.
 */
export function identitySourceOf(cfg: IdentityConfig, workload: Workload): IdentitySource {
  const dir = identityDirOf(cfg);
  const given: KeySource | undefined =
    cfg.MURMUR_IDENTITY_KEY_FD !== undefined ? { fd: cfg.MURMUR_IDENTITY_KEY_FD } : cfg.MURMUR_IDENTITY_KEY_FILE ? { file: cfg.MURMUR_IDENTITY_KEY_FILE } : undefined;
  if (workload === 'app' && !given && isFlatIdentityStore(dir)) migrateIdentityStore(dir);
  if (!isIdentityStore(dir)) return { trustDir: dir, key: given ?? { file: `${dir.replace(/\/+$/, '')}/${workload}.key` } };
  const store = identityStoreAt(dir);
  if (given) return { trustDir: store.publicDir, key: given };
  if (workload === 'app') return { trustDir: store.publicDir, key: { file: store.keyFile('app') } };
  throw new Error(
    `MURMUR_IDENTITY_DIR ${dir} is npm start's key store, which hands ${workload} its own key: run it under \`npm start\`, or by hand with MURMUR_IDENTITY_DIR=${store.publicDir} and MURMUR_IDENTITY_KEY_FILE set to its key`,
  );
}

/** Loads `workload`'s identity from where its configuration says (identitySourceOf): what every main.ts calls. */
export function loadWorkloadIdentity(cfg: IdentityConfig, workload: Workload, roles: readonly Role[] = []): WorkloadIdentity {
  return identityFrom(identitySourceOf(cfg, workload), workload, roles);
}

/**
 * `workload`'s identity from `source`: its own private key and every public key of the trust
 * folder. Fails with what to do when its key is missing or is not the one its `.pub` publishes
 * (every call it made would be refused), and when the trust folder holds another workload's
 * private key (before reading anything else).
 */
export function identityFrom(source: IdentitySource, workload: Workload, roles: readonly Role[] = []): WorkloadIdentity {
  const trust = loadTrustStore(source.trustDir, workload);
  const signing = loadSigningKey(source.key, workload);
  if (!signing) {
    throw new Error(
      `no workload key of ${workload} at ${describeKeySource(source.key)}: run \`npm start\` once (it creates the keys of every workload) or set MURMUR_IDENTITY_DIR (and MURMUR_IDENTITY_KEY_FILE) to where they are`,
    );
  }
  const published = trust.get(workload);
  if (!published) throw new Error(`no public key ${workload}.pub in ${source.trustDir}`);
  if (!keysMatch(signing.key, published.key)) {
    throw new Error(`the private key of ${workload} (${describeKeySource(source.key)}) is not the one ${source.trustDir}/${workload}.pub publishes`);
  }
  return new WorkloadIdentity(signing, trust, roles);
}

/** Key verification through auth's VerifyKey (as the calling workload): what services other than auth use. */
export function keyVerifierVia(client: Pick<PromiseClient<auth.AuthServiceClient>, 'verifyKey'>): KeyVerifier {
  return async (authorization) => {
    const { principal } = await client.verifyKey({ authorization, resource: '' });
    if (!principal) throw new MurmurError('internal_error', 'auth returned no principal');
    return { userId: principal.userId, keyId: principal.keyId, scopes: principal.scopes };
  };
}
