/**
 * Who our processes are. Every Murmur process has a workload identity of its own (a signing key;
 * see identity-keys.ts) and signs a short token with it on every RPC it makes, so a service knows
 * which workload calls it. The names, the roles a workload may hold and which workloads may vouch
 * for a user (principal assertions) are decided here and nowhere else.
 */

/** Every workload: the gateway, the five services, and the app (admin CLI, seeding, Settings pages). */
export const WORKLOADS = ['gateway', 'auth', 'billing', 'library', 'transcription', 'conversion', 'app'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** Roles a workload token may carry. */
export type Role = 'admin';

/**
 * The roles each workload may claim; a token claiming more is refused. Only the app holds
 * `admin`: its operator CLI and (later) its Settings pages act across users.
 */
export const WORKLOAD_ROLES: Readonly<Record<Workload, readonly Role[]>> = {
  gateway: [],
  auth: [],
  billing: [],
  library: [],
  transcription: [],
  conversion: [],
  app: ['admin'],
};

/**
 * Workloads whose principal assertions ("this call is for user U") services accept: the
 * gateway, after it verified the caller's key; auth, for Envoy's internal listener, where its
 * ext_authz check verified the key.
 */
export const PRINCIPAL_ISSUERS: readonly Workload[] = ['gateway', 'auth'];

/** The workload that serves each gRPC service, by fully-qualified service name. */
export const SERVICE_WORKLOADS: Readonly<Record<string, Workload>> = {
  'murmur.auth.v1.AuthService': 'auth',
  'envoy.service.auth.v3.Authorization': 'auth',
  'murmur.billing.v1.BillingService': 'billing',
  'murmur.library.v1.LibraryService': 'library',
  'murmur.transcription.v1.TranscriptionService': 'transcription',
  'murmur.conversion.v1.ConversionService': 'conversion',
};

export function isWorkload(value: unknown): value is Workload {
  return typeof value === 'string' && (WORKLOADS as readonly string[]).includes(value);
}

/** The service part of a method path, `/pkg.Service/Method` → `pkg.Service`. */
export function serviceOfPath(path: string): string {
  return path.split('/')[1] ?? '';
}

/** The workload a method path is served by, or undefined for a path of no service of ours. */
export function workloadOfPath(path: string): Workload | undefined {
  return SERVICE_WORKLOADS[serviceOfPath(path)];
}
