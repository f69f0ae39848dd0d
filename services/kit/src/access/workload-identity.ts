/**
 * A process's identity as a whole: its workload name, its signing key (to mint its tokens) and
 * the trust store (to check everyone else's), loaded from MURMUR_IDENTITY_DIR. Every main.ts
 * loads one; tests make them with `testIdentities()` from @murmur/kit/testing.
 */
import { auth } from '@murmur/proto';
import type { PromiseClient } from '../grpc-client';
import { MurmurError } from '../errors';
import type { AccessControl, KeyVerifier } from './access-control';
import { loadSigningKey, loadTrustStore, type SigningKey, type TrustStore } from './identity-keys';
import { TokenMinter, TokenVerifier } from './tokens';
import type { Role, Workload } from './workloads';

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

/**
 * Loads `workload`'s identity from `dir`: its own private key and every public key there. Fails
 * with what to do when its key is missing — a process without an identity could call nothing.
 */
export function loadWorkloadIdentity(dir: string, workload: Workload, roles: readonly Role[] = []): WorkloadIdentity {
  const signing = loadSigningKey(dir, workload);
  if (!signing) {
    throw new Error(
      `no workload key ${workload}.key in ${dir}: run \`npm start\` once (it creates the keys of every workload) or set MURMUR_IDENTITY_DIR to the folder holding them`,
    );
  }
  const trust = loadTrustStore(dir);
  if (!trust.has(workload)) throw new Error(`no public key ${workload}.pub in ${dir} beside its private key`);
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
