/**
 * A client of envoy.service.auth.v3.Authorization built from Envoy's own API protos (the copy in
 * @grpc/grpc-js-xds), independent of the pruned descriptor the service uses, plus CheckRequests
 * shaped the way Envoy's ext_authz filter sends them.
 */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Folders that resolve external_auth.proto and all its imports. */
export function envoyProtoDirs(): string[] {
  const xds = path.dirname(require.resolve('@grpc/grpc-js-xds/package.json'));
  const protobufjs = path.dirname(require.resolve('protobufjs/package.json'));
  return [...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(xds, 'deps', d)), protobufjs];
}

/** Envoy's real CheckRequest / CheckResponse, decoded with every field present (defaults: true). */
export function loadEnvoyAuthPackage(): protoLoader.PackageDefinition {
  return protoLoader.loadSync(['envoy/service/auth/v3/external_auth.proto', 'google/rpc/error_details.proto'], {
    includeDirs: envoyProtoDirs(),
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
}

interface HeaderValueOption {
  header: { key: string; value: string; raw_value: Buffer };
  append_action: string;
}

/** CheckResponse as decoded with the options above. */
export interface DecodedCheckResponse {
  status: { code: number; message: string; details: unknown[] };
  http_response?: 'ok_response' | 'denied_response';
  ok_response?: { headers: HeaderValueOption[]; headers_to_remove: string[] };
  denied_response?: { status: { code: string }; headers: HeaderValueOption[]; body: string };
  dynamic_metadata: { fields: Record<string, { stringValue?: string; string_value?: string }> } | null;
}

export interface EnvoyAuthzClient {
  check(request: object): Promise<DecodedCheckResponse>;
  close(): void;
}

export function envoyAuthzClient(address: string, pkg = loadEnvoyAuthPackage()): EnvoyAuthzClient {
  const Ctor = grpc.makeGenericClientConstructor(pkg['envoy.service.auth.v3.Authorization'] as grpc.ServiceDefinition, 'Authorization');
  const client = new Ctor(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Check(req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: DecodedCheckResponse) => void): void;
  };
  return {
    check: (request) =>
      new Promise((resolve, reject) =>
        client.Check(request, { deadline: Date.now() + 5_000 }, (err, res) => (err ? reject(err) : resolve(res as DecodedCheckResponse))),
      ),
    close: () => client.close(),
  };
}

/** The value of a header in a list of HeaderValueOption (undefined when absent). */
export function headerOf(headers: HeaderValueOption[], name: string): string | undefined {
  return headers.find((h) => h.header.key.toLowerCase() === name)?.header.value;
}

export const ENVOY_REQUEST_ID = '6f1c2a4e-9b3d-4c8e-a1f0-7d2e5b9c3a18';

export interface CheckRequestInput {
  /** Sent as the `authorization` header when defined. */
  authorization?: string;
  contentType?: string;
  method?: string;
  path?: string;
  extraHeaders?: Record<string, string>;
  /** Envoy's encode_raw_headers: headers in header_map as raw bytes instead of the string map. */
  rawHeaders?: boolean;
}

/**
 * A CheckRequest as Envoy's ext_authz filter builds it for a call on the internal gRPC listener
 * (:9000): peer addresses, request time, the HTTP/2 pseudo-headers and the forwarded headers.
 */
export function envoyCheckRequest(input: CheckRequestInput = {}): object {
  const method = input.method ?? 'POST';
  const reqPath = input.path ?? '/murmur.library.v1.LibraryService/ListRecordings';
  const host = 'murmur-envoy.murmur.svc.cluster.local:9000';
  const headers: Record<string, string> = {
    ':authority': host,
    ':method': method,
    ':path': reqPath,
    ':scheme': 'http',
    'content-type': input.contentType ?? 'application/grpc',
    te: 'trailers',
    'grpc-timeout': '4998m',
    'user-agent': 'grpc-node-js/1.14.7',
    'x-forwarded-proto': 'http',
    'x-request-id': ENVOY_REQUEST_ID,
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    ...(input.authorization !== undefined ? { authorization: input.authorization } : {}),
    ...input.extraHeaders,
  };
  const http = input.rawHeaders
    ? { header_map: { headers: Object.entries(headers).map(([key, value]) => ({ key, raw_value: Buffer.from(value, 'utf8') })) } }
    : { headers };
  const now = Date.now();
  return {
    attributes: {
      source: { address: { socket_address: { address: '10.42.3.17', port_value: 51234 } } },
      destination: { address: { socket_address: { address: '10.42.1.5', port_value: 9000 } } },
      request: {
        time: { seconds: String(Math.floor(now / 1000)), nanos: (now % 1000) * 1_000_000 },
        http: {
          id: '13359530689914624127',
          method,
          path: reqPath,
          host,
          scheme: 'http',
          protocol: 'HTTP/2',
          size: '-1',
          ...http,
        },
      },
      metadata_context: {},
      route_metadata_context: {},
    },
  };
}
