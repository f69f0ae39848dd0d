/**
 * The app's workload identity with the admin role: how the operator CLI, the app's pages and the
 * launcher's first-run seeding authenticate to the services' admin RPCs (contract rpc-policy.ts).
 * Beside `npm start` its key is the store's `admin/app.key` (a folder of its own, owner-only,
 * which no service is given); the app's pages under `npm start` are handed it on a descriptor
 * instead; elsewhere MURMUR_IDENTITY_DIR or MURMUR_IDENTITY_KEY_FILE say where it is
 * (docs/authorization.md#keys).
 */
import { loadWorkloadIdentity, type IdentityConfig, type TokenMinter } from '@murmur/kit';

export function adminIdentity(cfg: IdentityConfig): TokenMinter {
  return loadWorkloadIdentity(cfg, 'app', ['admin']).minter;
}
