/**
 * The authorization policy: for every RPC of every service, who may call it. The kit's gRPC
 * server checks it on every call before a handler runs (access-control.ts); an RPC with no entry
 * is refused, and each service's table is typed by its generated definition, so a new RPC
 * without a rule does not compile. docs/authorization.md prints this table for people.
 *
 * Callers:
 * - `user`: a developer, by their API key in `authorization` metadata (an internal team calling
 *   directly, or through Envoy's internal listener) or by a principal assertion the gateway or
 *   auth attached after verifying the key. The call acts on that user's data only: `owner` names
 *   the request field holding the owner, which the server fills from the principal when empty
 *   and refuses as `not_found` when it names someone else. `owner: null` for RPCs without one.
 * - `workloads`: our own processes, by their workload token, acting for whichever user the
 *   request names (service-to-service charging and storing).
 * - `admin`: the app's workload with the admin role (the operator CLI, seeding, Settings pages).
 * - `anyone`: whoever reaches the port (Envoy's ext_authz check, which answers only for the key
 *   it is shown).
 *
 * A user rule naming `scope: 'ai'` is an AI call or a change: a read-only key (scopes ["read"])
 * is refused it as `insufficient_scope`, however it calls (directly, through Envoy, or behind
 * the gateway's assertion, which carries the key's scopes).
 */
import { auth, billing, conversion, library, transcription } from '@murmur/proto';
import type { OAuthScope } from './oauth-rules';
import type { Workload } from './workloads';

/**
 * Who may call one RPC. `user.scope`: the scope a developer's key or token must hold (kit
 * oauth-rules: `ai` for whatever spends credits or changes state, which a read-only key lacks).
 */
export interface RpcRule {
  user?: { owner: OwnerField | null; scope?: OAuthScope };
  workloads?: readonly Workload[];
  admin?: true;
  anyone?: true;
}

/**
 * Where the owner sits in a request (steps are fields, or `oneof:case`): a field of it; the
 * `userId` case of GetUser's `lookup` oneof; or `userId` in the `config` case of a Transcribe
 * stream's first `payload`. The access matrix test sets each path to another user and expects
 * not_found, so a path that names no real field fails there.
 */
export type OwnerField = 'ownerId' | 'userId' | 'lookup:userId' | 'payload:config.userId';

/** A service's table: one rule per method of its generated definition, no more, no less. */
type ServiceRules<D> = { readonly [K in keyof D]: RpcRule };

const ADMIN: RpcRule = { admin: true };
/** Our services that verify developer keys with auth for callers who send one. */
const KEY_VERIFIERS: readonly Workload[] = ['gateway', 'billing', 'library', 'transcription', 'conversion', 'app'];
/** Any user, workload or admin: reference data (plans, engines, kinds). */
const AUTHENTICATED: RpcRule = { user: { owner: null }, workloads: ['gateway', 'auth', 'billing', 'library', 'transcription', 'conversion', 'app'], admin: true };

export const AUTH_RULES: ServiceRules<typeof auth.AuthServiceService> = {
  verifyKey: { workloads: KEY_VERIFIERS },
  getUser: { user: { owner: 'lookup:userId' }, admin: true },
  createUser: ADMIN,
  listUsers: ADMIN,
  createApiKey: ADMIN,
  listApiKeys: ADMIN,
  revokeApiKey: ADMIN,
  // The app's sign-in stand-in: the app's web server and the admin CLI's `login`.
  createSignInLink: ADMIN,
  startSession: ADMIN,
  getSession: ADMIN,
  endSession: ADMIN,
  // OAuth for MCP clients: the app's authorization server endpoints and Connected apps page.
  registerOAuthClient: ADMIN,
  getOAuthClient: ADMIN,
  createAuthorizationCode: ADMIN,
  exchangeAuthorizationCode: ADMIN,
  exchangeRefreshToken: ADMIN,
  revokeOAuthToken: ADMIN,
  listOAuthConnections: ADMIN,
  revokeOAuthConnection: ADMIN,
  // Listen tokens (docs/live.md): a developer's own call, like AdmitAiRequest: the gateway makes it
  // with the verified key's assertion (POST /api/v1/listen/tokens), an internal team with its key.
  // The `ai` scope, since the token exists to open a stream that spends credits; auth checks that
  // key_id is one of the caller's own active keys and the scopes are within its scopes. The app
  // (admin) makes one for a signed-in person's session (the Record page, key_id = ses_…); auth
  // checks the session is that user's and live.
  createListenToken: { user: { owner: 'userId', scope: 'ai' }, admin: true },
  // The token is the browser's only credential, so only the gateway's WebSocket endpoint spends it.
  redeemListenToken: { workloads: ['gateway'] },
  // The request log (docs/request-log.md): only the gateway writes it, for whichever users its
  // batch names; a developer reads their own (GET /api/v1/requests), the app (Logs page) anyone's.
  recordRequests: { workloads: ['gateway'] },
  listRequests: { user: { owner: 'ownerId' }, admin: true },
};

export const BILLING_RULES: ServiceRules<typeof billing.BillingServiceService> = {
  listPlans: AUTHENTICATED,
  getUsage: { user: { owner: 'userId' }, admin: true },
  changePlan: ADMIN,
  grantPrepaidCredits: ADMIN,
  setSpendingCap: ADMIN,
  adjustCredits: ADMIN,
  // The gateway admits an AI call before reading its body: a read-only key is refused here too.
  admitAiRequest: { user: { owner: 'userId', scope: 'ai' } },
  getRateLimit: { user: { owner: 'userId' }, admin: true },
  reserve: { workloads: ['transcription', 'conversion'] },
  extendReservation: { workloads: ['transcription'] },
  commit: { workloads: ['transcription', 'conversion'] },
  release: { workloads: ['transcription', 'conversion'] },
  renewReservation: { workloads: ['transcription', 'conversion'] },
  listLedgerEntries: { user: { owner: 'userId' }, admin: true },
  getUsageHistory: { user: { owner: 'userId' }, admin: true },
};

/** The owner's own data; the app's admin reads it too. */
const OWN_DATA: RpcRule = { user: { owner: 'ownerId' }, admin: true };

export const LIBRARY_RULES: ServiceRules<typeof library.LibraryServiceService> = {
  listRecordings: OWN_DATA,
  getRecording: { user: { owner: 'ownerId' }, workloads: ['conversion'], admin: true },
  listThoughtThreads: OWN_DATA,
  getThoughtThread: OWN_DATA,
  listFolders: OWN_DATA,
  // A transcription job checks its folder at submission, for callers that did not (direct gRPC).
  getFolder: { user: { owner: 'ownerId' }, workloads: ['transcription'], admin: true },
  listKnowledgeBases: OWN_DATA,
  // `ask` (conversion's Answer) searches the caller's passages on the caller's behalf.
  searchPassages: { user: { owner: 'ownerId' }, workloads: ['conversion'], admin: true },
  getLibraryStats: OWN_DATA,
  // A transcription that completes stores its transcript for its owner (save: true), a call's as a
  // job's: the transcription service is its one owner. Not a developer's own call: a recording is
  // made only from paid transcription, never from text sent directly (which would store any
  // transcript free of charge).
  createRecording: { workloads: ['transcription'], admin: true },
  // A transcription job that ended without its charge (canceled, failed) takes back the recording it saved.
  deleteRecording: { workloads: ['transcription'], admin: true },
  updateRecording: ADMIN,
  // Naming the speakers of one's own recording: a change, so the `ai` scope (a read-only key is refused).
  setSpeakerNames: { user: { owner: 'ownerId', scope: 'ai' }, admin: true },
  attachTranscript: ADMIN,
  addArtifact: { workloads: ['conversion'], admin: true },
  createFolder: ADMIN,
  createThoughtThread: ADMIN,
  addThreadItem: ADMIN,
  addThreadContextSource: ADMIN,
  createKnowledgeBase: ADMIN,
  addKnowledgeBaseRecording: ADMIN,
};

export const TRANSCRIPTION_RULES: ServiceRules<typeof transcription.TranscriptionServiceService> = {
  transcribe: { user: { owner: 'payload:config.userId', scope: 'ai' } },
  listEngines: AUTHENTICATED,
  submitTranscription: { user: { owner: 'payload:config.userId', scope: 'ai' } },
  streamTranscription: { user: { owner: 'payload:config.userId', scope: 'ai' } },
  getTranscription: OWN_DATA,
  listTranscriptions: OWN_DATA,
  cancelTranscription: { user: { owner: 'ownerId', scope: 'ai' } },
  watchTranscription: { user: { owner: 'ownerId' } },
  // Secrets and the default endpoint are made in the app (Settings → Developer), never by API.
  rotateWebhookSecret: ADMIN,
  getWebhookSettings: { user: { owner: 'userId' }, admin: true },
  setWebhookEndpoint: ADMIN,
  // The app's Webhook deliveries page lists them and its Resend button retries for the signed-in user.
  retryWebhook: { user: { owner: 'ownerId', scope: 'ai' }, admin: true },
  listWebhookDeliveries: OWN_DATA,
};

export const CONVERSION_RULES: ServiceRules<typeof conversion.ConversionServiceService> = {
  convert: { user: { owner: 'userId', scope: 'ai' } },
  answer: { user: { owner: 'userId', scope: 'ai' } },
  listKinds: AUTHENTICATED,
};

/** Envoy's ext_authz API, served by auth: Envoy has no workload identity; the NetworkPolicy admits only it. */
export const ENVOY_AUTHORIZATION_RULES = { check: { anyone: true } } as const satisfies Record<string, RpcRule>;

interface PathDefinition {
  path: string;
}

function byPath(definition: Record<string, PathDefinition>, rules: Record<string, RpcRule>): [string, RpcRule][] {
  return Object.entries(definition).map(([name, def]) => {
    const rule = rules[name];
    if (!rule) throw new Error(`no access rule for ${def.path}`);
    return [def.path, rule];
  });
}

/** Every rule by method path (`/murmur.library.v1.LibraryService/ListRecordings`). */
export const RPC_RULES: ReadonlyMap<string, RpcRule> = new Map([
  ...byPath(auth.AuthServiceService, AUTH_RULES),
  ...byPath(billing.BillingServiceService, BILLING_RULES),
  ...byPath(library.LibraryServiceService, LIBRARY_RULES),
  ...byPath(transcription.TranscriptionServiceService, TRANSCRIPTION_RULES),
  ...byPath(conversion.ConversionServiceService, CONVERSION_RULES),
  ['/envoy.service.auth.v3.Authorization/Check', ENVOY_AUTHORIZATION_RULES.check],
]);

/** The rule of a method path, or undefined: no rule means nobody may call it. */
export function ruleFor(path: string): RpcRule | undefined {
  return RPC_RULES.get(path);
}

/** Whether a developer's own credentials (key or assertion) may call the method at all. */
export function usersMayCall(path: string): boolean {
  return ruleFor(path)?.user !== undefined;
}
