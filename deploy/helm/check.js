#!/usr/bin/env node
/**
 * Offline check of the Helm chart, the way a cluster would judge it, without helm, kubectl or a
 * cluster:
 *
 *  1. builds deploy/helm/render (Go text/template + sprig: Helm's template engine) from Debian's
 *     Go packages, offline;
 *  2. for the default values and for values-production.yaml: merges the values as Helm does and
 *     validates them against the chart's values.schema.json (ajv);
 *  3. renders the chart strictly (a missing value, a null printed, a bad template fails);
 *  4. parses every document as Kubernetes does (YAML 1.1, duplicate keys refused) and validates
 *     it against the Kubernetes OpenAPI schemas of `kubernetes-models` — types, enums, required
 *     fields — and, beyond them, refuses any field the schema does not declare (the models
 *     accept unknown fields; we record which fields their validators read and reject the rest);
 *  5. checks what no schema sees: Services, HPAs, PDBs and NetworkPolicies select real pods and
 *     ports; every secret/configMap reference resolves (hooks only to hooks: the release's own
 *     objects do not exist yet at pre-install); *_ADDR variables name real Services; every pod is
 *     non-root with a read-only root filesystem, no privilege escalation, all capabilities dropped
 *     and RuntimeDefault seccomp, has probes (native gRPC for gRPC ports) and resources; a
 *     preStop ends within the grace period, and the gateway has 30 s after it to drain its live
 *     streams; Murmur
 *     images are targets of the repository's Dockerfile; and the Envoy config routes to Services
 *     that exist, listens on the ports the chart exposes and probes, and keeps admin on loopback;
 *     the ServiceMonitor scrapes a port its Services have, and the Grafana dashboard's ConfigMap
 *     holds files/grafana-dashboard.json, valid, every query on Murmur's metrics (lib/dashboard.js).
 *
 * `node deploy/helm/check.js` (npm run helm:check) checks the real chart; the functions are
 * exported for deploy/helm/test/chart.test.ts, which also feeds it broken copies.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parseDockerfile } = require('../docker/dockerfile.js');
const { checkInvariants, GATEWAY_DRAIN_SECONDS } = require('./lib/invariants');
const { APT_PACKAGES, KEY_CACHE, buildRenderer, runRenderer } = require('./lib/renderer');
const { parseManifests, validateObject, validateValues } = require('./lib/schemas');

const REPO = path.resolve(__dirname, '..', '..');
const CHART = path.join(__dirname, 'murmur');
/** The value files checked: the defaults, and a production-like installation. */
const VALUE_SETS = [
  { name: 'default values', files: [] },
  { name: 'values-production.yaml', files: ['values-production.yaml'] },
];

// ── all together ────────────────────────────────────────────────────────────────────────────────

/** The target names of the repository's Dockerfile. */
function dockerTargets(dockerfile = path.join(REPO, 'Dockerfile')) {
  return parseDockerfile(fs.readFileSync(dockerfile, 'utf8')).stages.map((s) => s.name);
}

/**
 * Renders `chartDir` with `valueFiles` (relative to the chart) and checks everything; returns
 * { errors, objects, values }. A render failure is reported as errors, not thrown.
 */
function checkChart({ binary, chartDir = CHART, valueFiles = [], targets = dockerTargets() }) {
  const args = ['-chart', chartDir, ...valueFiles.flatMap((f) => ['-f', path.resolve(chartDir, f)])];
  const errors = [];
  let values;
  try {
    values = JSON.parse(runRenderer(binary, [...args, '-dump-values']));
  } catch (e) {
    return { errors: [`values: ${e.message}`], objects: [], values: undefined };
  }
  errors.push(...validateValues(chartDir, values));
  let text;
  try {
    text = runRenderer(binary, [...args, '-name', 'murmur', '-namespace', 'murmur', '-key-cache', KEY_CACHE]);
  } catch (e) {
    errors.push(`render: ${e.message}`);
    return { errors, objects: [], values };
  }
  let docs;
  try {
    docs = parseManifests(text);
  } catch (e) {
    errors.push(`yaml: ${e.message}`);
    return { errors, objects: [], values };
  }
  for (const { source, obj } of docs) {
    for (const e of validateObject(obj)) errors.push(`${source} ${obj && obj.kind} ${obj && obj.metadata && obj.metadata.name}: ${e}`);
  }
  const objects = docs.map((d) => d.obj);
  if (errors.length === 0) {
    const envoyFile = fs.readFileSync(path.join(chartDir, 'files', 'envoy.yaml'), 'utf8');
    const dashboardFile = fs.readFileSync(path.join(chartDir, 'files', 'grafana-dashboard.json'), 'utf8');
    errors.push(...checkInvariants(objects, { values, dockerTargets: targets, envoyFile, dashboardFile }));
  }
  return { errors, objects, values };
}

/**
 * One Envoy config: the chart's files/envoy.yaml (a chart reads nothing outside its folder, and
 * `helm package` must not depend on following a link out of it), with deploy/envoy/envoy.yaml a
 * symbolic link to it for everything that is not Helm. A copy in its place would drift.
 */
function envoyLinkErrors(chartDir = CHART) {
  const link = path.join(REPO, 'deploy', 'envoy', 'envoy.yaml');
  const source = path.join(chartDir, 'files', 'envoy.yaml');
  const isLink = fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  if (isLink && fs.realpathSync(link) === fs.realpathSync(source) && !fs.lstatSync(source).isSymbolicLink()) return [];
  const target = path.relative(path.dirname(link), source);
  return [`deploy/envoy/envoy.yaml must be a symbolic link to ${path.relative(REPO, source)}: ln -sf ${target} deploy/envoy/envoy.yaml`];
}

function main() {
  const binary = buildRenderer();
  let failed = false;
  const copy = envoyLinkErrors();
  if (copy.length > 0) {
    failed = true;
    for (const e of copy) console.error(`✗ ${e}`);
  }
  for (const set of VALUE_SETS) {
    const { errors, objects } = checkChart({ binary, valueFiles: set.files });
    if (errors.length > 0) {
      failed = true;
      console.error(`✗ ${set.name}: ${errors.length} problem(s)`);
      for (const e of errors) console.error(`    ${e}`);
    } else {
      const kinds = {};
      for (const o of objects) kinds[o.kind] = (kinds[o.kind] || 0) + 1;
      console.log(`✓ ${set.name}: ${objects.length} objects valid (${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(', ')})`);
    }
  }
  process.exit(failed ? 1 : 0);
}

if (require.main === module) {
  try {
    main();
  } catch (e) {
    console.error(`helm check: ${e.message}`);
    process.exit(1);
  }
}

module.exports = {
  APT_PACKAGES,
  CHART,
  VALUE_SETS,
  buildRenderer,
  checkChart,
  checkInvariants,
  dockerTargets,
  envoyLinkErrors,
  GATEWAY_DRAIN_SECONDS,
  parseManifests,
  validateObject,
  validateValues,
};
