/**
 * The app's workload identity with the admin role: how the operator CLI and the launcher's
 * first-run seeding authenticate to the services' admin RPCs (kit access/rpc-policy.ts).
 */
import { identityDirOf, loadWorkloadIdentity, type TokenMinter } from '@murmur/kit';

export function adminIdentity(cfg: { MURMUR_DATA_DIR: string; MURMUR_IDENTITY_DIR?: string | undefined }): TokenMinter {
  return loadWorkloadIdentity(identityDirOf(cfg), 'app', ['admin']).minter;
}
