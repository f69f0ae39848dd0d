/**
 * What a process started by the launcher is given of the workload keys (docs/authorization.md#keys):
 * the folder of public keys, and its own private key written to its descriptor 3, read once at
 * start and closed. No path to a private key is in its environment, its arguments or the folder
 * it is pointed at, so no process is given another workload's key (the app's, with the admin
 * role, included).
 */
import { readFileSync } from 'node:fs';
import type { Workload } from '@murmur/contract';
import type { IdentityStore } from '@murmur/kit';

/** The descriptor a child reads its private key from (MURMUR_IDENTITY_KEY_FD). */
export const KEY_FD = 3;

export interface ChildIdentity {
  /** Environment of the child: the public folder and the descriptor; a key file the launcher was given is not passed on. */
  env: NodeJS.ProcessEnv;
  /** The child's private key as it is on disk now (a replaced key is taken at the next restart). */
  key: () => Buffer;
}

export function childIdentity(store: IdentityStore, workload: Workload): ChildIdentity {
  return {
    env: { MURMUR_IDENTITY_DIR: store.publicDir, MURMUR_IDENTITY_KEY_FD: String(KEY_FD), MURMUR_IDENTITY_KEY_FILE: undefined },
    key: () => readFileSync(store.keyFile(workload)),
  };
}
