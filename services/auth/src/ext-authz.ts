/**
 * Envoy's external authorization API, `envoy.service.auth.v3.Authorization/Check`, served by the
 * auth process beside AuthService so Envoy's ext_authz filter can guard the internal gRPC
 * listener (deploy/envoy/envoy.yaml) with the same key check as VerifyKey.
 *
 * Wire types come from Envoy's own v3 API protos, pruned into a generated descriptor
 * (gen-envoy/, made by scripts/gen-envoy-authz.js) and turned into (de)serializers by
 * @grpc/proto-loader: nothing of Envoy's is needed at run time beyond that file.
 *
 * - Who: the key is verified as VerifyKey does, with the resource of the checked request
 *   ({@link resourceOf}): an OAuth access token passes only on the MCP path it was issued for,
 *   so on the RPC paths this listener guards it is refused like an unknown key.
 * - Allow: status OK; the upstream request gets `x-murmur-principal`, a principal assertion for
 *   the key's user signed by auth and bound to the service the path names (kit access/tokens.ts),
 *   overwriting anything the caller sent under that name, so the service trusts the user without
 *   verifying the key again. The principal is also emitted as ext_authz dynamic metadata for the
 *   access log.
 * - Deny, once the key is verified: a path whose RPC no developer may call (admin and
 *   service-to-service RPCs, unknown paths: `permission_denied`, 403 / PERMISSION_DENIED), an RPC
 *   whose rule needs a scope the key lacks (a read-only key calling an AI RPC:
 *   `insufficient_scope`, 403 / PERMISSION_DENIED, kit requireRuleScope), and a request carrying
 *   a workload token (workloads never come through this listener).
 * - Deny (401 codes of DESIGN.md §2): status UNAUTHENTICATED with a DeniedHttpResponse: 401,
 *   `WWW-Authenticate: Bearer realm="murmur"` (+ `error="invalid_token"` when a key was sent) and
 *   `x-request-id`. An HTTP request gets the contract's JSON error body. A gRPC request gets the
 *   message as body (Envoy turns a local reply's body into `grpc-message`) and the contract code
 *   as `google.rpc.ErrorInfo` in `grpc-status-details-bin`, exactly as a direct call to a service
 *   fails, so gRPC clients read the same code either way.
 * - Any other MurmurError (e.g. service_unavailable: the database is down) is a denial with that
 *   code's HTTP status and body; anything unexpected fails the Check call itself, which Envoy
 *   (failure_mode_allow: false) turns into its status_on_error.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';
import {
  MurmurError,
  toErrorBody,
  ruleFor,
  usersMayCall,
  workloadOfPath,
} from '@murmur/contract';
import {
  acceptRequestId,
  bindService,
  PRINCIPAL_ASSERTION_HEADER,
  toGrpcError,
  requireRuleScope,
  WORKLOAD_TOKEN_HEADER,
  type BoundService,
  type TokenMinter,
} from '@murmur/kit';
import { AUTHORIZATION_DESCRIPTOR } from './gen-envoy/authorization-descriptor';
import type { AuthService, Principal } from './service';

/** One header as Envoy sends it in `header_map` (when its ext_authz sets encode_raw_headers). */
interface EnvoyHeaderValue {
  key?: string;
  value?: string;
  raw_value?: Buffer;
}

/** The part of envoy.service.auth.v3.CheckRequest this service reads (keepCase names). */
export interface CheckRequest {
  attributes?: {
    request?: {
      http?: {
        id?: string;
        method?: string;
        path?: string;
        host?: string;
        /** "http" or "https", as Envoy saw the request. */
        scheme?: string;
        /** Lower-cased header names → values (Envoy's default encoding). */
        headers?: Record<string, string>;
        header_map?: { headers?: EnvoyHeaderValue[] };
      };
    };
  };
}

/** config.core.v3.HeaderValueOption as this service writes it. */
export interface HeaderValueOption {
  header: { key: string; value: string };
  append_action: 'OVERWRITE_IF_EXISTS_OR_ADD';
}

/** google.protobuf.Struct in protobufjs object form (the field names of its built-in types). */
interface StringStruct {
  fields: Record<string, { stringValue: string }>;
}

/** envoy.service.auth.v3.CheckResponse as this service writes it. */
export interface CheckResponse {
  status: { code: number; message: string };
  ok_response?: { headers: HeaderValueOption[] };
  denied_response?: { status: { code: number }; headers: HeaderValueOption[]; body: string };
  dynamic_metadata?: StringStruct;
}

interface MethodDef<Q, R> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize: (value: Q) => Buffer;
  requestDeserialize: (bytes: Buffer) => Q;
  responseSerialize: (value: R) => Buffer;
  responseDeserialize: (bytes: Buffer) => R;
}

/** The definition of envoy.service.auth.v3.Authorization, typed by what this service reads and writes. */
export type AuthorizationDefinition = { Check: MethodDef<CheckRequest, CheckResponse> };

let definition: AuthorizationDefinition | undefined;

/** Built once from the generated descriptor; proto-loader options match the types above. */
export function authorizationDefinition(): AuthorizationDefinition {
  if (!definition) {
    const pkg = fromJSON(AUTHORIZATION_DESCRIPTOR, { keepCase: true, longs: String, enums: String, defaults: false, oneofs: false });
    definition = pkg['envoy.service.auth.v3.Authorization'] as unknown as AuthorizationDefinition;
  }
  return definition;
}

/** A header of the checked request, by lower-case name, from either encoding Envoy uses. */
export function requestHeader(req: CheckRequest, name: string): string | undefined {
  const http = req.attributes?.request?.http;
  const fromMap = http?.headers?.[name];
  if (fromMap !== undefined) return fromMap;
  for (const h of http?.header_map?.headers ?? []) {
    if (h.key?.toLowerCase() !== name) continue;
    if (h.raw_value && h.raw_value.length > 0) return h.raw_value.toString('utf8');
    return h.value ?? '';
  }
  return undefined;
}

/** The path of the MCP server (kit mcpResourceUrl): the only path an OAuth access token is for. */
const MCP_PATH = '/mcp';

/**
 * The resource (RFC 8707) a checked request is for: scheme + host + "/mcp" when its path is the
 * MCP server's (query ignored), '' for any other path — every RPC path — so an OAuth access
 * token, which is issued for the MCP server only, is refused there while API keys pass as
 * always. VerifyKey normalises and compares it with the token's resource.
 */
export function resourceOf(req: CheckRequest): string {
  const http = req.attributes?.request?.http;
  const path = (http?.path ?? '').split('?')[0];
  if (path !== MCP_PATH || !http?.scheme || !http.host) return '';
  return `${http.scheme}://${http.host}${MCP_PATH}`;
}

/** The contract's request id for a request Envoy saw (its UUID becomes `req_<32 hex>`; see kit). */
export const requestIdFor = acceptRequestId;

const KEY_SENT_CODES = new Set(['invalid_api_key', 'expired_api_key']);

/** RFC 6750 challenge, as the gateway sends it: `error="invalid_token"` only when a key was sent. */
export function wwwAuthenticate(code: string): string {
  return KEY_SENT_CODES.has(code) ? 'Bearer realm="murmur", error="invalid_token"' : 'Bearer realm="murmur"';
}

const set = (key: string, value: string): HeaderValueOption => ({ header: { key, value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' });

/** OK with the principal's assertion for the upstream (and the principal for Envoy's access log as dynamic metadata). */
export function allowResponse(principal: Principal, assertion: string): CheckResponse {
  return {
    status: { code: GrpcStatus.OK, message: '' },
    ok_response: { headers: [set(PRINCIPAL_ASSERTION_HEADER, assertion)] },
    dynamic_metadata: { fields: { user_id: { stringValue: principal.userId }, key_id: { stringValue: principal.keyId } } },
  };
}

function isGrpcRequest(req: CheckRequest): boolean {
  return (requestHeader(req, 'content-type') ?? '').toLowerCase().startsWith('application/grpc');
}

/** The denial Envoy sends the caller for `err`; see the module comment for HTTP vs gRPC. */
export function denyResponse(err: MurmurError, req: CheckRequest): CheckResponse {
  const requestId = requestIdFor(requestHeader(req, 'x-request-id'));
  const headers = [set('x-request-id', requestId)];
  if (err.httpStatus === 401) headers.push(set('www-authenticate', wwwAuthenticate(err.code)));
  let body: string;
  if (isGrpcRequest(req)) {
    const details = toGrpcError(err).metadata?.get('grpc-status-details-bin')[0];
    if (Buffer.isBuffer(details)) headers.push(set('grpc-status-details-bin', details.toString('base64')));
    body = err.message;
  } else {
    headers.push(set('content-type', 'application/json; charset=utf-8'));
    body = JSON.stringify(toErrorBody(err, requestId));
  }
  return {
    status: { code: toGrpcError(err).code ?? GrpcStatus.UNKNOWN, message: err.message },
    denied_response: { status: { code: err.httpStatus }, headers, body },
  };
}

/**
 * Check: verify the Authorization header Envoy forwarded; then is the path's RPC one a developer
 * may call, with no workload token; allow with an assertion for that service, or deny.
 */
export async function check(service: AuthService, minter: TokenMinter, req: CheckRequest): Promise<CheckResponse> {
  try {
    // Who first (401 for a missing or bad key, whatever the path), then may they (403).
    const principal = await service.verifyKey(requestHeader(req, 'authorization') ?? '', resourceOf(req));
    const path = req.attributes?.request?.http?.path ?? '';
    const audience = workloadOfPath(path);
    if (!audience || !usersMayCall(path)) {
      throw new MurmurError('permission_denied', `${path || 'This path'} is not an RPC a developer key may call.`);
    }
    // A read-only key is refused an AI RPC here already, as the service itself would (the assertion carries its scopes too).
    requireRuleScope(path, ruleFor(path), principal);
    if (requestHeader(req, WORKLOAD_TOKEN_HEADER) !== undefined) {
      throw new MurmurError('permission_denied', 'Workload tokens are not accepted on this listener; send your API key.');
    }
    return allowResponse(principal, await minter.principalAssertion(audience, principal));
  } catch (err) {
    if (err instanceof MurmurError) return denyResponse(err, req);
    throw err;
  }
}

/** The Authorization definition bound to `service` (assertions minted by auth's `minter`), ready for startGrpcServer. */
export function bindEnvoyAuthorization(service: AuthService, minter: TokenMinter): BoundService {
  return bindService(authorizationDefinition(), { Check: (req) => check(service, minter, req) });
}
