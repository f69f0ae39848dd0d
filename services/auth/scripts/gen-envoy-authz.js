#!/usr/bin/env node
// Generates services/auth/src/gen-envoy/authorization-descriptor.ts: the message types of
// envoy.service.auth.v3.Authorization/Check, taken from Envoy's own v3 API protos (the copy that
// the npm package @grpc/grpc-js-xds ships under deps/) and pruned to the types Check reaches.
//
// Why a pruned descriptor and not the protos at run time: the auth service then needs neither
// @grpc/grpc-js-xds (a dev dependency, 7 MB of protos) nor a protoc step in production; it hands
// the descriptor to @grpc/proto-loader's fromJSON, which yields the (de)serializers.
//
//   node services/auth/scripts/gen-envoy-authz.js          rewrite the committed file
//   node services/auth/scripts/gen-envoy-authz.js --check  fail when the committed file is stale
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const OUT = path.resolve(__dirname, '..', 'src', 'gen-envoy', 'authorization-descriptor.ts');
const ENTRY = 'envoy/service/auth/v3/external_auth.proto';
const SERVICE = 'envoy.service.auth.v3.Authorization';

/** The folders of @grpc/grpc-js-xds that hold Envoy's API protos and their imports. */
function protoDirs() {
  const pkg = path.dirname(require.resolve('@grpc/grpc-js-xds/package.json'));
  return ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(pkg, 'deps', d));
}

function xdsVersion() {
  return JSON.parse(fs.readFileSync(require.resolve('@grpc/grpc-js-xds/package.json'), 'utf8')).version;
}

/** Loads external_auth.proto and everything it imports into one protobufjs Root. */
function loadRoot() {
  const protobuf = require('protobufjs');
  // google/protobuf/descriptor.proto comes with protobufjs; the other well-known types are built in.
  const dirs = [...protoDirs(), path.dirname(require.resolve('protobufjs/package.json'))];
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of dirs) {
      const candidate = path.join(dir, target);
      if (fs.existsSync(candidate)) return candidate;
    }
    return target;
  };
  root.loadSync(ENTRY, { keepCase: true });
  root.resolveAll();
  return root;
}

/** Full names (no leading dot) of every message and enum reachable from the Check RPC. */
function reachableTypes(root) {
  const protobuf = require('protobufjs');
  const service = root.lookupService(SERVICE);
  const seen = new Map();
  const visit = (type) => {
    const name = type.fullName.slice(1);
    if (seen.has(name)) return;
    seen.set(name, type);
    if (type instanceof protobuf.Type) {
      for (const field of type.fieldsArray) if (field.resolvedType) visit(field.resolvedType);
    }
  };
  for (const method of service.methodsArray) {
    visit(method.resolvedRequestType);
    visit(method.resolvedResponseType);
  }
  return { service, types: seen };
}

/** protobufjs JSON of one type, without options (validation rules, annotations) or nested types. */
function typeJson(type) {
  const protobuf = require('protobufjs');
  if (type instanceof protobuf.Enum) return { values: { ...type.values } };
  const fields = {};
  for (const field of type.fieldsArray) {
    const json = { type: field.resolvedType ? field.resolvedType.fullName : field.type, id: field.id };
    if (field.map) json.keyType = field.keyType;
    if (field.repeated) json.rule = 'repeated';
    // proto3 `optional` keeps explicit presence through its synthetic oneof.
    fields[field.name] = json;
  }
  const out = { fields };
  const oneofs = type.oneofsArray.filter((o) => o.fieldsArray.length > 0);
  if (oneofs.length > 0) {
    out.oneofs = Object.fromEntries(oneofs.map((o) => [o.name, { oneof: o.fieldsArray.map((f) => f.name) }]));
  }
  return out;
}

/** Nests the reachable types by full name into one protobufjs JSON namespace tree (sorted). */
function buildDescriptor(root) {
  const { service, types } = reachableTypes(root);
  const tree = { nested: {} };
  const place = (fullName, json) => {
    const parts = fullName.split('.');
    let node = tree;
    for (const part of parts.slice(0, -1)) {
      node.nested = node.nested || {};
      node.nested[part] = node.nested[part] || {};
      node = node.nested[part];
    }
    node.nested = node.nested || {};
    node.nested[parts[parts.length - 1]] = { ...json, ...(node.nested[parts[parts.length - 1]] || {}) };
  };
  for (const [name, type] of types) place(name, typeJson(type));
  place(SERVICE, {
    methods: Object.fromEntries(
      service.methodsArray.map((m) => [m.name, { requestType: m.resolvedRequestType.fullName, responseType: m.resolvedResponseType.fullName }]),
    ),
  });
  return sortKeys(tree);
}

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
  }
  return value;
}

/** The TypeScript source of the generated module. */
function render() {
  const descriptor = buildDescriptor(loadRoot());
  return [
    `// Generated by services/auth/scripts/gen-envoy-authz.js from Envoy's v3 API protos as shipped`,
    `// by @grpc/grpc-js-xds ${xdsVersion()} (${ENTRY} and the types it reaches). Do not edit.`,
    `import type { fromJSON } from '@grpc/proto-loader';`,
    ``,
    `const descriptor = ${JSON.stringify(descriptor, null, 2)};`,
    ``,
    `/**`,
    ` * protobufjs JSON of ${SERVICE} and its messages, for @grpc/proto-loader's fromJSON. (Cast:`,
    ` * protobufjs's typings omit map fields' keyType and make comments required.)`,
    ` */`,
    `export const AUTHORIZATION_DESCRIPTOR = descriptor as unknown as Parameters<typeof fromJSON>[0];`,
    ``,
  ].join('\n');
}

module.exports = { render, OUT };

if (require.main === module) {
  const source = render();
  if (process.argv.includes('--check')) {
    const committed = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    if (committed !== source) {
      console.error(`${path.relative(process.cwd(), OUT)} is stale: run node services/auth/scripts/gen-envoy-authz.js`);
      process.exit(1);
    }
    console.log(`${path.relative(process.cwd(), OUT)} is up to date`);
  } else {
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, source);
    console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
  }
}
