'use strict';
// What the protos cannot say: cluster references, HTTP/2 for gRPC clusters, filter order,
// ext_authz on gRPC routes, WebSocket routes' timeouts, loopback admin, distinct ports, no
// inline secrets.
const { suggestion } = require('./decoder');
const { durationSeconds } = require('./proto-json');
const { ROUTER, EXT_AUTHZ, HTTP_PROTOCOL_OPTIONS } = require('./names');


// ---------------------------------------------------------------------------------------------
// Semantic checks

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function typeOf(typedConfig) {
  return typedConfig && typedConfig['@type'];
}

function socketOf(address) {
  return address?.socket_address;
}

function isHttp2Cluster(cluster) {
  const opts = cluster.typed_extension_protocol_options?.[HTTP_PROTOCOL_OPTIONS];
  if (opts) {
    if (opts.explicit_http_config?.http2_protocol_options || opts.use_downstream_protocol_config?.http2_protocol_options) return true;
    if (opts.auto_config) return true;
  }
  return Boolean(cluster.http2_protocol_options);
}

/** A BoolValue as decoded (`{ value }`), or a plain bool; unset → `fallback`. */
function boolOf(wrapped, fallback) {
  if (wrapped === undefined || wrapped === null) return fallback;
  return typeof wrapped === 'object' ? Boolean(wrapped.value) : Boolean(wrapped);
}

/** Whether `configs` (UpgradeConfig[]) say websocket: true, false, or undefined when they say nothing. */
function websocketIn(configs) {
  const c = (configs ?? []).find((u) => String(u.upgrade_type).toLowerCase() === 'websocket');
  return c ? boolOf(c.enabled, true) : undefined;
}

/**
 * A route a WebSocket goes through lives as long as the socket: its route `timeout` must be 0s
 * (unset, it is 15 s, which has cut WebSockets in Envoy versions that armed it on upgrades:
 * envoyproxy/envoy#20062), and its `idle_timeout` must be set, above zero, so a dead peer is
 * cut by a limit chosen for streams rather than the connection manager's stream_idle_timeout.
 */
function webSocketRouteChecks(hcmValue, p, err) {
  const fromManager = websocketIn(hcmValue.upgrade_configs) ?? false;
  (hcmValue.route_config.virtual_hosts ?? []).forEach((vh, i) => {
    (vh.routes ?? []).forEach((r, j) => {
      if (!r.route) return;
      if (!(websocketIn(r.route.upgrade_configs) ?? fromManager)) return;
      const rp = `${p}.route_config.virtual_hosts[${i}].routes[${j}].route`;
      if (durationSeconds(r.route.timeout ?? '15s') !== 0) {
        err(`${rp}.timeout`, `this route carries WebSockets, so its timeout must be 0s (is ${r.route.timeout ?? 'unset: 15s'}): a stream lasts as long as the socket`);
      }
      if (!r.route.idle_timeout || durationSeconds(r.route.idle_timeout) === 0) {
        err(`${rp}.idle_timeout`, 'this route carries WebSockets: set an idle_timeout above zero, longer than the upstream\'s own idle close, so a dead peer is cut');
      }
    });
  });
}

function semanticChecks(bootstrap, decoder) {
  const errors = [];
  const err = (p, message) => errors.push({ path: p, message });
  const clusters = bootstrap.static_resources?.clusters ?? [];
  const byName = new Map();
  clusters.forEach((c, i) => {
    const p = `static_resources.clusters[${i}]`;
    if (byName.has(c.name)) err(`${p}.name`, `cluster "${c.name}" is defined twice`);
    byName.set(c.name, { cluster: c, path: p });
    for (const [key, value] of Object.entries(c.typed_extension_protocol_options ?? {})) {
      if (typeOf(value) === HTTP_PROTOCOL_OPTIONS && key !== HTTP_PROTOCOL_OPTIONS) {
        err(`${p}.typed_extension_protocol_options.${key}`, `Envoy looks these options up as "${HTTP_PROTOCOL_OPTIONS}"; under "${key}" they are ignored`);
      }
    }
    const discovery = c.type ?? 'STATIC';
    if (['STATIC', 'STRICT_DNS', 'LOGICAL_DNS'].includes(discovery) && !c.cluster_type) {
      const endpoints = (c.load_assignment?.endpoints ?? []).flatMap((e) => e.lb_endpoints ?? []);
      if (endpoints.length === 0) err(p, `cluster "${c.name}" (${discovery}) has no endpoints in load_assignment`);
      if (c.load_assignment && c.load_assignment.cluster_name !== c.name) {
        err(`${p}.load_assignment.cluster_name`, `must equal the cluster's name "${c.name}", is "${c.load_assignment.cluster_name}"`);
      }
    }
    (c.health_checks ?? []).forEach((hc, j) => {
      if (hc.grpc_health_check && !isHttp2Cluster(c)) {
        err(`${p}.health_checks[${j}]`, `gRPC health checking needs HTTP/2, but cluster "${c.name}" has no http2_protocol_options in ${HTTP_PROTOCOL_OPTIONS}`);
      }
    });
  });
  const names = [...byName.keys()];
  const notHttp2 = new Map();
  for (const ref of decoder.clusterRefs) {
    const target = byName.get(ref.name);
    if (!target) {
      err(ref.path, `cluster "${ref.name}" is not defined in static_resources.clusters (defined: ${names.join(', ') || 'none'})${suggestion(ref.name, names)}`);
    } else if (ref.via === 'grpc' && !isHttp2Cluster(target.cluster)) {
      notHttp2.set(ref.name, [...(notHttp2.get(ref.name) ?? []), ref.path]);
    }
  }
  for (const [name, paths] of notHttp2) {
    const more = paths.length > 1 ? ` (and ${paths.length - 1} more gRPC use(s))` : '';
    err(paths[0], `cluster "${name}" is spoken to over gRPC, which needs HTTP/2: add http2_protocol_options in its ${HTTP_PROTOCOL_OPTIONS}${more}`);
  }

  for (const hcm of decoder.connectionManagers) {
    const p = hcm.path;
    const filters = hcm.value.http_filters ?? [];
    const routerAt = filters.map((f, i) => (typeOf(f.typed_config) === ROUTER ? i : -1)).filter((i) => i >= 0);
    if (filters.length === 0) err(`${p}.http_filters`, 'an HttpConnectionManager needs http_filters ending with the router');
    else if (routerAt.length === 0) err(`${p}.http_filters`, `no router filter (${ROUTER}): it must be the last HTTP filter`);
    else if (routerAt[routerAt.length - 1] !== filters.length - 1 || routerAt.length > 1) {
      const after = filters.slice(routerAt[0] + 1).map((f) => f.name || typeOf(f.typed_config));
      err(`${p}.http_filters[${routerAt[0]}]`, `the router filter must be the last HTTP filter, but ${after.join(', ')} come(s) after it`);
    }
    if (!hcm.value.route_config) {
      err(p, 'no inline route_config: this is a static config without a management server, so rds cannot be served');
      continue;
    }
    const routesGrpc = (hcm.value.route_config.virtual_hosts ?? []).some((vh) =>
      (vh.routes ?? []).some((r) => /^\/murmur\./.test(r.match?.prefix ?? r.match?.path ?? '')),
    );
    const authzAt = filters.findIndex((f) => typeOf(f.typed_config) === EXT_AUTHZ);
    filters.forEach((f, i) => {
      const cfg = f.typed_config;
      if (typeOf(cfg) !== EXT_AUTHZ) return;
      const fp = `${p}.http_filters[${i}].typed_config`;
      if (cfg.failure_mode_allow) err(`${fp}.failure_mode_allow`, 'failure_mode_allow must be false: an unreachable auth service must not let calls through');
      if (cfg.grpc_service && cfg.transport_api_version !== 'V3') err(`${fp}.transport_api_version`, 'ext_authz must use transport_api_version V3');
      // What auth's Check reads (services/auth/src/ext-authz.ts): the key, and a workload token to refuse.
      const allowed = cfg.allowed_headers?.patterns;
      if (allowed) {
        for (const name of ['authorization', 'x-murmur-workload']) {
          if (!allowed.some((m) => m.exact === name)) err(`${fp}.allowed_headers`, `ext_authz must send ${name} to auth's Check (it decides on it)`);
        }
      }
    });
    // With the router last (checked above), an ext_authz present runs before it.
    if (routesGrpc && authzAt < 0) err(`${p}.http_filters`, 'this listener routes internal gRPC services (/murmur.*) but has no ext_authz filter');
    webSocketRouteChecks(hcm.value, p, err);
  }

  const admin = socketOf(bootstrap.admin?.address);
  if (admin && !LOOPBACK.has(admin.address)) {
    err('admin.address.socket_address.address', `admin must listen on 127.0.0.1 only, not ${admin.address}: it can change and stop Envoy`);
  }

  const bound = new Map();
  (bootstrap.static_resources?.listeners ?? []).forEach((l, i) => {
    const s = socketOf(l.address);
    if (!s) return;
    const port = s.port_value ?? 0;
    const taken = [...bound.entries()].find(([k]) => k.endsWith(`:${port}`) && (k.startsWith(`${s.address}:`) || k.startsWith('0.0.0.0:') || s.address === '0.0.0.0'));
    if (taken && port !== 0) err(`static_resources.listeners[${i}].address`, `port ${port} is already bound by listener "${taken[1]}"`);
    if (admin && (admin.port_value ?? 0) === port && port !== 0) err(`static_resources.listeners[${i}].address`, `port ${port} is the admin port`);
    bound.set(`${s.address}:${port}`, l.name);
  });
  return errors;
}

module.exports = { semanticChecks };
