'use strict';
// Loading Envoy's v3 API protos (the copy @grpc/grpc-js-xds ships) into one protobufjs Root.
const fs = require('node:fs');
const path = require('node:path');

// ---------------------------------------------------------------------------------------------
// Loading Envoy's API

/** Folders holding Envoy's API protos and their imports (+ protobufjs for descriptor.proto). */
function protoDirs() {
  const xds = path.dirname(require.resolve('@grpc/grpc-js-xds/package.json'));
  const dirs = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(xds, 'deps', d));
  return [...dirs, path.dirname(require.resolve('protobufjs/package.json'))];
}

function listProtos(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return listProtos(p);
    return e.name.endsWith('.proto') ? [p] : [];
  });
}

let api;

/**
 * Every v3 Envoy proto (and the xds/udpa types) that can be loaded from the shipped copy, in one
 * protobufjs Root. Files whose imports are not shipped (the v2 API, OpenCensus, Prometheus) are
 * left out and listed in `skipped`; a config naming one of their types fails as an unknown @type.
 */
function loadEnvoyApi() {
  if (api) return api;
  const protobuf = require('protobufjs');
  const dirs = protoDirs();
  const locate = (file) => {
    if (Object.prototype.hasOwnProperty.call(protobuf.common, file)) return 'builtin';
    for (const dir of dirs) {
      const candidate = path.join(dir, file);
      if (fs.existsSync(candidate)) return candidate;
    }
    return null;
  };
  const importsOf = new Map();
  const loadable = new Map();
  const canLoad = (file, stack = new Set()) => {
    if (loadable.has(file)) return loadable.get(file);
    const where = locate(file);
    if (where === null || where === 'builtin') {
      loadable.set(file, where !== null);
      return where !== null;
    }
    if (stack.has(file)) return true;
    stack.add(file);
    if (!importsOf.has(file)) {
      const text = fs.readFileSync(where, 'utf8');
      importsOf.set(file, [...text.matchAll(/^import\s+(?:public\s+|weak\s+)?"([^"]+)"/gm)].map((m) => m[1]));
    }
    const ok = importsOf.get(file).every((imported) => canLoad(imported, stack));
    stack.delete(file);
    loadable.set(file, ok);
    return ok;
  };
  const roots = [path.join(dirs[0], 'envoy'), path.join(dirs[1], 'xds'), path.join(dirs[1], 'udpa')];
  const files = roots.flatMap((r) => listProtos(r).map((p) => path.relative(path.dirname(r), p)));
  const wanted = files.filter((f) => !/\/v2(alpha\d*)?\//.test(f));
  const good = wanted.filter((f) => canLoad(f));
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    const where = locate(target);
    return where && where !== 'builtin' ? where : target;
  };
  root.loadSync(good, { keepCase: true });
  root.resolveAll();
  api = { root, protobuf, skipped: wanted.filter((f) => !good.includes(f)), version: xdsVersion() };
  return api;
}

function xdsVersion() {
  return JSON.parse(fs.readFileSync(require.resolve('@grpc/grpc-js-xds/package.json'), 'utf8')).version;
}

module.exports = { loadEnvoyApi };
