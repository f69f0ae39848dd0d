#!/usr/bin/env node
// Offline validation of Envoy configs (no Envoy binary needed): `node scripts/check-envoy.js FILE...`
//
// 1. Decodes each YAML file as envoy.config.bootstrap.v3.Bootstrap against Envoy's own v3 API
//    protos (the copy the npm package @grpc/grpc-js-xds ships under deps/), with the proto3 JSON
//    mapping Envoy's loader uses: unknown fields, wrong types, bad enum values, two members of one
//    oneof and deprecated fields are errors; every `typed_config` (any google.protobuf.Any, and
//    xds/udpa TypedStruct) is resolved by its `@type` and decoded recursively; the
//    protoc-gen-validate rules Envoy enforces on load are checked (a subset: required messages
//    and oneofs, string/number/duration/repeated/map bounds, patterns, header-name rules).
// 2. Once that is clean, checks what the protos cannot say: every cluster that a route, gRPC
//    service or HTTP URI names exists; clusters spoken to over gRPC (ext_authz, tracers, gRPC
//    health checks) have HTTP/2; the router is the last HTTP filter of every
//    HttpConnectionManager; a listener routing `/murmur.*` gRPC services runs ext_authz (V3,
//    failure_mode_allow off); a route that upgrades to WebSocket has `timeout: 0s` and an idle
//    timeout of its own; admin listens on loopback only; listeners do not share a port;
//    DNS/static clusters have endpoints; no private key is inline; no access log prints the
//    Authorization header.
//
// Exit 0 when every file passes, 1 with one "file:line: path: message" per problem otherwise.
// As a module: checkEnvoyConfig(yamlText) → { errors, summary } (used by deploy/envoy/test).
'use strict';
const fs = require('node:fs');
const { loadEnvoyApi } = require('./envoy/api');
const { Decoder } = require('./envoy/decoder');
const { BOOTSTRAP } = require('./envoy/names');
const { semanticChecks } = require('./envoy/semantics');
const { parseYaml, lineOf } = require('./envoy/yaml');

/**
 * Checks one config. `errors` are { path, line, message }; `summary` counts what was decoded.
 */
function checkEnvoyConfig(text) {
  const parsed = parseYaml(text);
  if (parsed.problems.length) return { errors: parsed.problems, summary: null };
  const { root } = loadEnvoyApi();
  const decoder = new Decoder(root);
  const bootstrap = decoder.message(root.lookupType(BOOTSTRAP), parsed.value ?? {}, '');
  const errors = [...decoder.errors];
  // The semantic checks read the decoded config, so they run once it decodes cleanly (a value
  // that did not decode would otherwise be reported again as missing).
  if (bootstrap && errors.length === 0) errors.push(...semanticChecks(bootstrap, decoder));
  const routes = decoder.connectionManagers.reduce(
    (n, h) => n + (h.value.route_config?.virtual_hosts ?? []).reduce((m, vh) => m + (vh.routes ?? []).length, 0),
    0,
  );
  return {
    errors: errors.map((e) => ({ ...e, line: lineOf(parsed.lines, e.path) })),
    summary: {
      listeners: bootstrap?.static_resources?.listeners?.length ?? 0,
      clusters: bootstrap?.static_resources?.clusters?.length ?? 0,
      routes,
      typedConfigs: decoder.typedConfigs,
    },
  };
}

function formatError(file, e) {
  return `${file}${e.line ? `:${e.line}` : ''}: ${e.path ? `${e.path}: ` : ''}${e.message}`;
}

module.exports = { checkEnvoyConfig, formatError, loadEnvoyApi };

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node scripts/check-envoy.js ENVOY.yaml...');
    process.exit(2);
  }
  let failed = false;
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      console.error(`${file}: ${e.message}`);
      failed = true;
      continue;
    }
    const { errors, summary } = checkEnvoyConfig(text);
    if (errors.length > 0) {
      failed = true;
      for (const e of errors) console.error(formatError(file, e));
      console.error(`${file}: ${errors.length} problem(s)`);
    } else {
      const { version } = loadEnvoyApi();
      console.log(
        `${file}: valid ${BOOTSTRAP} (Envoy v3 API from @grpc/grpc-js-xds ${version}): ` +
          `${summary.listeners} listeners, ${summary.clusters} clusters, ${summary.routes} routes, ${summary.typedConfigs} typed configs resolved`,
      );
    }
  }
  process.exit(failed ? 1 : 0);
}
