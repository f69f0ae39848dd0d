import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';

interface CheckError {
  path: string;
  line?: number;
  message: string;
}
interface Checker {
  checkEnvoyConfig(text: string): { errors: CheckError[]; summary: { listeners: number; clusters: number; routes: number; typedConfigs: number } | null };
}

const REPO = path.resolve(__dirname, '../../..');
const SCRIPT = path.join(REPO, 'scripts/check-envoy.js');
const CONFIG = path.join(REPO, 'deploy/envoy/envoy.yaml');
// The checker is plain JS (it runs in CI without a build); its exports are typed above.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkEnvoyConfig } = require(SCRIPT) as Checker;

const original = fs.readFileSync(CONFIG, 'utf8');

/* eslint-disable @typescript-eslint/no-explicit-any -- broken copies are edited as plain YAML trees */
type Tree = any;

const listener = (cfg: Tree, name: string) => cfg.static_resources.listeners.find((l: Tree) => l.name === name);
const hcm = (cfg: Tree, name: string) => listener(cfg, name).filter_chains[0].filters[0].typed_config;
const cluster = (cfg: Tree, name: string) => cfg.static_resources.clusters.find((c: Tree) => c.name === name);
const filters = (cfg: Tree, name: string) => hcm(cfg, name).http_filters as Tree[];
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
const EXT_AUTHZ = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const extAuthz = (cfg: Tree) => filters(cfg, 'internal_grpc').find((f) => f.typed_config['@type'] === EXT_AUTHZ).typed_config;

const publicRoutes = (cfg: Tree) => hcm(cfg, 'public_https').route_config.virtual_hosts[0].routes as Tree[];
const listenRoute = (cfg: Tree) => publicRoutes(cfg).find((r) => r.match.path === '/api/v1/listen');
/** A duration as Envoy's YAML writes it ("60s") → seconds. */
const seconds = (d: string) => Number(/^(\d+(?:\.\d+)?)s$/.exec(d)![1]);
/** The gateway closes a live stream without audio or keepalive for this long (4408, docs/live.md). */
const GATEWAY_STREAM_IDLE_CLOSE_S = 15;

/** A broken copy of the real config: parsed, edited, written back as YAML. */
function broken(edit: (cfg: Tree) => void): string {
  const cfg = parse(original);
  edit(cfg);
  return stringify(cfg);
}

describe('check-envoy on deploy/envoy/envoy.yaml', () => {
  it("decodes the real config as a Bootstrap against Envoy's protos, resolving every typed_config, and finds nothing wrong", () => {
    const { errors, summary } = checkEnvoyConfig(original);
    expect(errors).toEqual([]);
    expect(summary).toEqual({
      listeners: 3,
      clusters: 7,
      routes: expect.any(Number),
      // Every "@type" in the file was looked up and decoded as its message.
      typedConfigs: original.match(/"@type":/g)!.length,
    });
  });

  it('routes /api/v1 and /mcp to the gateway and each /murmur.<service>.v1. prefix to its service', () => {
    const cfg = parse(original);
    const publicRoutes = hcm(cfg, 'public_https').route_config.virtual_hosts[0].routes as Tree[];
    const target = (p: string) => publicRoutes.find((r) => r.match.path === p || r.match.path_separated_prefix === p)?.route;
    expect(target('/api/v1')).toMatchObject({ cluster: 'murmur-gateway' });
    expect(target('/mcp')).toMatchObject({ cluster: 'murmur-gateway', timeout: '0s' });
    expect(target('/api/v1/transcribe')).toMatchObject({ cluster: 'murmur-gateway', timeout: '0s' });
    expect(target('/api/v1/listen')).toMatchObject({ cluster: 'murmur-gateway' });
    const internal = hcm(cfg, 'internal_grpc').route_config.virtual_hosts[0].routes as Tree[];
    expect(internal.map((r) => [r.match.prefix, r.route.cluster])).toEqual(
      ['auth', 'billing', 'library', 'transcription', 'conversion'].map((s) => [`/murmur.${s}.v1.`, `murmur-${s}`]),
    );
    expect(extAuthz(cfg)).toMatchObject({ failure_mode_allow: false, transport_api_version: 'V3', grpc_service: { envoy_grpc: { cluster_name: 'murmur-auth' } } });
    expect(extAuthz(cfg).with_request_body).toBeUndefined();
  });

  it('carries WebSockets on /api/v1/listen alone: upgraded, with no whole-request limit and an idle limit above the gateway’s own', () => {
    const cfg = parse(original);
    const routes = publicRoutes(cfg);
    const at = routes.findIndex((r) => r.match.path === '/api/v1/listen');
    expect(at).toBeGreaterThanOrEqual(0);
    // An exact path (queries aside): /api/v1/listen/tokens is a plain POST on the 60 s route.
    expect(routes[at].match).toEqual({ path: '/api/v1/listen' });
    const listen = routes[at].route;
    expect(listen).toMatchObject({ cluster: 'murmur-gateway', timeout: '0s', upgrade_configs: [{ upgrade_type: 'websocket' }] });
    expect(listen.upgrade_configs[0].enabled).not.toBe(false);
    // Envoy cuts a silent stream only after the gateway has closed it itself with 4408.
    expect(seconds(listen.idle_timeout)).toBeGreaterThan(GATEWAY_STREAM_IDLE_CLOSE_S);
    expect(seconds(listen.idle_timeout)).toBeLessThan(seconds(hcm(cfg, 'public_https').stream_idle_timeout));
    // First match wins: it comes before the /api/v1 route that would give it 60 s.
    expect(at).toBeLessThan(routes.findIndex((r) => r.match.path_separated_prefix === '/api/v1'));
    // No other route, and no connection manager as a whole, upgrades.
    for (const name of ['public_https', 'internal_grpc', 'probes']) {
      expect(hcm(cfg, name).upgrade_configs).toBeUndefined();
      const all = hcm(cfg, name).route_config.virtual_hosts.flatMap((vh: Tree) => vh.routes as Tree[]);
      expect(all.filter((r: Tree) => r.route?.upgrade_configs).map((r: Tree) => r.match)).toEqual(name === 'public_https' ? [{ path: '/api/v1/listen' }] : []);
    }
    // The other routes keep their own limits.
    const limits = routes.map((r) => [r.match.path ?? r.match.path_separated_prefix ?? r.match.prefix, r.route.timeout, r.route.idle_timeout]);
    expect(limits).toEqual([
      ['/api/v1/transcribe', '0s', '3600s'],
      ['/api/v1/listen', '0s', '60s'],
      ['/api/v1/convert', '600s', '600s'],
      ['/api/v1', '60s', undefined],
      ['/mcp', '0s', '3600s'],
      ['/', '15s', undefined],
    ]);
  });

  it('judges every route of a connection manager that upgrades as a whole, unless the route opts out', () => {
    const everywhere = (optOut: boolean) =>
      broken((cfg) => {
        hcm(cfg, 'public_https').upgrade_configs = [{ upgrade_type: 'websocket' }];
        if (optOut) for (const r of publicRoutes(cfg)) r.route.upgrade_configs ??= [{ upgrade_type: 'websocket', enabled: false }];
      });
    expect(checkEnvoyConfig(everywhere(true)).errors).toEqual([]);
    const errors = checkEnvoyConfig(everywhere(false)).errors.map((e) => e.path.replace(/^.*virtual_hosts\[0\]\./, ''));
    // /api/v1/convert (600 s), /api/v1 (60 s, no idle limit) and / (15 s, no idle limit); not the listen route.
    expect(errors).toEqual(['routes[2].route.timeout', 'routes[3].route.timeout', 'routes[3].route.idle_timeout', 'routes[5].route.timeout', 'routes[5].route.idle_timeout']);
  });

  // [what is broken, edit, path of the one error, message of the one error]
  const cases: Array<[string, (cfg: Tree) => void, string | RegExp, RegExp]> = [
    [
      'an unknown field',
      (cfg) => (cluster(cfg, 'murmur-auth').lb_polcy = 'ROUND_ROBIN'),
      'static_resources.clusters[1].lb_polcy',
      /unknown field "lb_polcy" in envoy\.config\.cluster\.v3\.Cluster \(did you mean "lb_policy"\?\)/,
    ],
    [
      'an unknown field inside a typed_config',
      (cfg) => (hcm(cfg, 'internal_grpc').stat_prefx = 'x'),
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.stat_prefx',
      /unknown field "stat_prefx" in envoy\.extensions\.filters\.network\.http_connection_manager\.v3\.HttpConnectionManager/,
    ],
    [
      'an unknown field three typed_configs deep',
      (cfg) => (hcm(cfg, 'public_https').access_log[0].typed_config.log_format.formatters[0].typed_config.strip = true),
      /access_log\[0\]\.typed_config\.log_format\.formatters\[0\]\.typed_config\.strip$/,
      /unknown field "strip" in envoy\.extensions\.formatter\.req_without_query\.v3\.ReqWithoutQuery/,
    ],
    [
      'an unknown @type',
      (cfg) => (hcm(cfg, 'public_https').access_log[0].typed_config['@type'] = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdOutAccessLog'),
      /access_log\[0\]\.typed_config\.@type$/,
      /unknown @type "envoy\.extensions\.access_loggers\.stream\.v3\.StdOutAccessLog"/,
    ],
    [
      'a string where an integer belongs',
      (cfg) => (cluster(cfg, 'murmur-auth').load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = 'fifty'),
      'static_resources.clusters[1].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value',
      /expected an integer \(uint32\), got the string "fifty"/,
    ],
    [
      'a number where a duration belongs',
      (cfg) => (cluster(cfg, 'murmur-billing').connect_timeout = 2),
      'static_resources.clusters[2].connect_timeout',
      /expected a duration such as "1\.5s".*got number 2/,
    ],
    [
      'a string where a bool belongs',
      (cfg) => (hcm(cfg, 'internal_grpc').use_remote_address = 'yes'),
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.use_remote_address',
      /expected true or false, got the string "yes"/,
    ],
    [
      'a list where an object belongs',
      (cfg) => (cfg.admin.address = [cfg.admin.address]),
      'admin.address',
      /expected an object \(envoy\.config\.core\.v3\.Address\), got a list/,
    ],
    [
      'a bad enum value',
      (cfg) => (hcm(cfg, 'internal_grpc').codec_type = 'HTTP3000'),
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.codec_type',
      /bad enum value "HTTP3000" for .*CodecType; one of AUTO, HTTP1, HTTP2, HTTP3/,
    ],
    [
      'a bad enum value in a typed_config',
      (cfg) => (extAuthz(cfg).transport_api_version = 'V4'),
      /http_filters\[0\]\.typed_config\.transport_api_version$/,
      /bad enum value "V4" for envoy\.config\.core\.v3\.ApiVersion/,
    ],
    [
      'two members of one oneof',
      (cfg) => (cluster(cfg, 'murmur-library').health_checks[0].tcp_health_check = {}),
      'static_resources.clusters[3].health_checks[0].tcp_health_check',
      /"tcp_health_check" and "grpc_health_check" are both set, but only one of oneof "health_checker" may be/,
    ],
    [
      'a port out of the range Envoy validates',
      (cfg) => (listener(cfg, 'probes').address.socket_address.port_value = 99020),
      'static_resources.listeners[2].address.socket_address.port_value',
      /99020 must be <= 65535/,
    ],
    [
      'a route without its required match',
      (cfg) => delete hcm(cfg, 'public_https').route_config.virtual_hosts[0].routes[0].match,
      /virtual_hosts\[0\]\.routes\[0\]\.match$/,
      /required field "match" is missing/,
    ],
    [
      'a deprecated field',
      (cfg) => (cluster(cfg, 'otel-collector').http2_protocol_options = {}),
      'static_resources.clusters[6].http2_protocol_options',
      /field "http2_protocol_options" of envoy\.config\.cluster\.v3\.Cluster is deprecated/,
    ],
    [
      'a route to a cluster that does not exist',
      (cfg) => (hcm(cfg, 'internal_grpc').route_config.virtual_hosts[0].routes[2].route.cluster = 'murmur-libary'),
      /virtual_hosts\[0\]\.routes\[2\]\.route\.cluster$/,
      /cluster "murmur-libary" is not defined in static_resources\.clusters \(defined: murmur-gateway, .*\) \(did you mean "murmur-library"\?\)/,
    ],
    [
      'ext_authz pointing at a cluster that does not exist',
      (cfg) => (extAuthz(cfg).grpc_service.envoy_grpc.cluster_name = 'auth'),
      /typed_config\.grpc_service\.envoy_grpc\.cluster_name$/,
      /cluster "auth" is not defined/,
    ],
    [
      'the router before another filter',
      (cfg) => filters(cfg, 'internal_grpc').reverse(),
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0]',
      /the router filter must be the last HTTP filter, but envoy\.filters\.http\.ext_authz come\(s\) after it/,
    ],
    [
      'no router at all',
      (cfg) => filters(cfg, 'probes').pop(),
      'static_resources.listeners[2].filter_chains[0].filters[0].typed_config.http_filters',
      /no router filter .* it must be the last HTTP filter/,
    ],
    [
      'the internal gRPC listener without ext_authz',
      (cfg) => (hcm(cfg, 'internal_grpc').http_filters = filters(cfg, 'internal_grpc').filter((f) => f.typed_config['@type'] === ROUTER)),
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters',
      /routes internal gRPC services \(\/murmur\.\*\) but has no ext_authz filter/,
    ],
    [
      'ext_authz that lets calls through when auth is down',
      (cfg) => (extAuthz(cfg).failure_mode_allow = true),
      /typed_config\.failure_mode_allow$/,
      /failure_mode_allow must be false/,
    ],
    [
      'ext_authz that hides a workload token from auth',
      (cfg) => (extAuthz(cfg).allowed_headers.patterns = extAuthz(cfg).allowed_headers.patterns.filter((m: { exact?: string }) => m.exact !== 'x-murmur-workload')),
      /typed_config\.allowed_headers$/,
      /ext_authz must send x-murmur-workload to auth's Check/,
    ],
    [
      'a WebSocket route left with the default 15 s route timeout',
      (cfg) => delete listenRoute(cfg).route.timeout,
      /virtual_hosts\[0\]\.routes\[1\]\.route\.timeout$/,
      /carries WebSockets, so its timeout must be 0s \(is unset: 15s\)/,
    ],
    [
      'a WebSocket route with a whole-request limit',
      (cfg) => (listenRoute(cfg).route.timeout = '14400s'),
      /virtual_hosts\[0\]\.routes\[1\]\.route\.timeout$/,
      /carries WebSockets, so its timeout must be 0s \(is 14400s\)/,
    ],
    [
      'a WebSocket route without an idle limit of its own',
      (cfg) => delete listenRoute(cfg).route.idle_timeout,
      /virtual_hosts\[0\]\.routes\[1\]\.route\.idle_timeout$/,
      /carries WebSockets: set an idle_timeout above zero/,
    ],
    [
      'admin on every interface',
      (cfg) => (cfg.admin.address.socket_address.address = '0.0.0.0'),
      'admin.address.socket_address.address',
      /admin must listen on 127\.0\.0\.1 only, not 0\.0\.0\.0/,
    ],
    [
      'a gRPC health check on an HTTP/1.1 cluster',
      (cfg) => (cluster(cfg, 'murmur-gateway').health_checks[0] = { timeout: '1s', interval: '5s', unhealthy_threshold: 2, healthy_threshold: 1, grpc_health_check: {} }),
      'static_resources.clusters[0].health_checks[0]',
      /gRPC health checking needs HTTP\/2, but cluster "murmur-gateway"/,
    ],
    [
      'the tracer sending OTLP/gRPC to an HTTP/1.1 cluster',
      (cfg) => (cluster(cfg, 'otel-collector').typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'].explicit_http_config = { http_protocol_options: {} }),
      'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.tracing.provider.typed_config.grpc_service.envoy_grpc.cluster_name',
      /cluster "otel-collector" is spoken to over gRPC, which needs HTTP\/2: .* \(and 1 more gRPC use\(s\)\)/,
    ],
    [
      'a private key inline',
      (cfg) => (listener(cfg, 'public_https').filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificates[0].private_key = { inline_string: 'KEY' }),
      /tls_certificates\[0\]\.private_key$/,
      /private_key is inline: keep keys out of the config/,
    ],
    [
      'an access log that prints the Authorization header',
      (cfg) => (hcm(cfg, 'public_https').access_log[0].typed_config.log_format.json_format.key = '%REQ(Authorization)%'),
      /access_log\[0\]\.typed_config\.log_format$/,
      /prints the Authorization header/,
    ],
    [
      'two listeners on one port',
      (cfg) => (listener(cfg, 'probes').address.socket_address.port_value = 9000),
      'static_resources.listeners[2].address',
      /port 9000 is already bound by listener "internal_grpc"/,
    ],
  ];

  it.each(cases)('fails on %s, with one clear error', (_what, edit, errorPath, message) => {
    const { errors } = checkEnvoyConfig(broken(edit));
    expect(errors).toHaveLength(1);
    const [error] = errors;
    if (typeof errorPath === 'string') expect(error!.path).toBe(errorPath);
    else expect(error!.path).toMatch(errorPath);
    expect(error!.message).toMatch(message);
    expect(error!.line).toEqual(expect.any(Number));
  });

  it('decodes a TypedStruct as the message its type_url names', () => {
    const asTypedStruct = (typo: boolean) =>
      broken((cfg) => {
        const filter = filters(cfg, 'internal_grpc').find((f) => f.typed_config['@type'] === EXT_AUTHZ);
        const { '@type': typeUrl, failure_mode_allow, ...rest } = filter.typed_config;
        const value = { ...rest, [typo ? 'failure_mod_allow' : 'failure_mode_allow']: failure_mode_allow };
        filter.typed_config = { '@type': 'type.googleapis.com/xds.type.v3.TypedStruct', type_url: typeUrl, value };
      });
    expect(checkEnvoyConfig(asTypedStruct(false)).errors).toEqual([]);
    expect(checkEnvoyConfig(asTypedStruct(true)).errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/unknown field "failure_mod_allow" in envoy\.extensions\.filters\.http\.ext_authz\.v3\.ExtAuthz/) }),
    ]);
  });

  it('fails on YAML that Envoy would not read the same way (a duplicate key)', () => {
    const text = original.replace('  cluster: murmur-envoy\n', '  cluster: murmur-envoy\n  cluster: other\n');
    expect(text).not.toBe(original);
    const line = text.split('\n').indexOf('  cluster: other') + 1;
    expect(checkEnvoyConfig(text).errors).toEqual([{ path: '', line, message: 'YAML: Map keys must be unique' }]);
  });

  describe('as a command', () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'check-envoy-'));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('exits 0 on the real config and says what it checked', () => {
      const run = spawnSync(process.execPath, [SCRIPT, CONFIG], { encoding: 'utf8', cwd: REPO });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/envoy\.yaml: valid envoy\.config\.bootstrap\.v3\.Bootstrap .*3 listeners, 7 clusters/);
    });

    it('exits 1 on a broken copy, printing file:line: path: message', () => {
      const file = path.join(dir, 'envoy.yaml');
      fs.writeFileSync(file, original.replace('codec_type: HTTP2', 'codec_type: HTTP3000'));
      const line = original.split('\n').findIndex((l) => l.includes('codec_type: HTTP2')) + 1;
      const run = spawnSync(process.execPath, [SCRIPT, file], { encoding: 'utf8', cwd: REPO });
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`${file}:${line}: static_resources.listeners[1].filter_chains[0].filters[0].typed_config.codec_type: bad enum value "HTTP3000"`);
      expect(run.stderr).toContain(`${file}: 1 problem(s)`);
    });

    it('exits 2 without a file to check', () => {
      expect(spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8' }).status).toBe(2);
    });
  });
});
