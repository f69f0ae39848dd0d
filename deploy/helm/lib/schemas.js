'use strict';
// Values against values.schema.json; manifests parsed as Kubernetes does and validated against
// the Kubernetes OpenAPI schemas, unknown fields refused.
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');
const Ajv = require('ajv');
const { execFileSync } = require('node:child_process');

// ── 2–4. values, rendering, schemas ─────────────────────────────────────────────────────────────

/** Compiled JSON schemas by file, kept while the file is unchanged (the checks validate many renders). */
const compiled = new Map();

/** The validator of the JSON schema in `file`, compiled once per content. */
function validatorOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const known = compiled.get(file);
  if (known && known.text === text) return known.validate;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(text));
  compiled.set(file, { text, validate });
  return validate;
}

/** The chart's values.schema.json verdict on the merged values: a list of error lines. */
function validateValues(chartDir, values) {
  const file = path.join(chartDir, 'values.schema.json');
  if (!fs.existsSync(file)) return [];
  const validate = validatorOf(file);
  if (validate(values)) return [];
  return (validate.errors || []).map((e) => `values${e.instancePath.replace(/\//g, '.')}: ${e.message}${e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})` : ''}`);
}

/** Parses a multi-document YAML stream the way the API server's client does (YAML 1.1). */
function parseManifests(text) {
  const docs = [];
  let source = '';
  for (const doc of YAML.parseAllDocuments(text, { version: '1.1', uniqueKeys: true, prettyErrors: true })) {
    const comment = (doc.commentBefore || '').trim();
    const m = /Source: (\S+)/.exec(comment);
    if (m) source = m[1];
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const obj = doc.toJS({ maxAliasCount: 0 });
    if (obj === null || obj === undefined) continue;
    docs.push({ source, obj });
  }
  return docs;
}

/**
 * Wraps `value` so that reads of its properties are recorded: the generated validators of
 * kubernetes-models read every property their schema declares (and enumerate the keys of
 * free-form maps such as labels), so a key nobody read is a field Kubernetes does not know.
 */
function track(value, at, seen) {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v, i) => track(v, `${at}/${i}`, seen));
  const rec = { at, keys: Object.keys(value), read: new Set(), open: false };
  seen.push(rec);
  const target = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, track(v, `${at}/${k}`, seen)]));
  return new Proxy(target, {
    get(t, k, r) {
      if (typeof k === 'string') rec.read.add(k);
      return Reflect.get(t, k, r);
    },
    has(t, k) {
      if (typeof k === 'string') rec.read.add(k);
      return Reflect.has(t, k);
    },
    ownKeys(t) {
      rec.open = true;
      return Reflect.ownKeys(t);
    },
  });
}

/**
 * Models of custom resources published as ES modules only, by API group: KEDA's. Their package
 * exports only `import`, which jest's module system (where the chart test runs this file) cannot
 * load, so such an object is validated by this file run as a script in a child Node process.
 */
const ESM_MODELS = { 'keda.sh': '@kubernetes-models/keda' };

/**
 * Custom resources with no models package at all: a JSON Schema of the fields of their CRD the
 * chart may set (crds/*.schema.json, each naming the CRD it follows), every other field refused.
 */
const CRD_SCHEMAS = { 'monitoring.coreos.com/v1/ServiceMonitor': path.join(__dirname, 'crds', 'servicemonitor.schema.json') };

/** The errors of `obj` against the CRD schema of `file`. */
function validateCrd(file, obj) {
  const validate = validatorOf(file);
  if (validate(obj)) return [];
  return (validate.errors || []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty}: unknown field)` : ''}`);
}

function apiGroupVersion(obj) {
  return obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
}

/** Schema errors of one Kubernetes object, unknown fields included. */
function validateObject(obj) {
  if (!obj || typeof obj !== 'object' || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
    return ['not a Kubernetes object (apiVersion and kind are required)'];
  }
  const [group, version] = apiGroupVersion(obj);
  const crd = CRD_SCHEMAS[`${obj.apiVersion}/${obj.kind}`];
  if (crd) return validateCrd(crd, obj);
  if (Object.prototype.hasOwnProperty.call(ESM_MODELS, group)) {
    const out = execFileSync(process.execPath, [__filename, '--validate-stdin'], { input: JSON.stringify(obj), encoding: 'utf8' });
    return JSON.parse(out);
  }
  let Model;
  try {
    Model = require(`kubernetes-models/${group ? `${group}/` : ''}${version}/${obj.kind}`)[obj.kind];
  } catch {
    return [`no Kubernetes schema for ${obj.apiVersion} ${obj.kind}`];
  }
  return validateWith(Model, obj);
}

/** The errors of `obj` against `Model`'s schema, and the fields its validator never read. */
function validateWith(Model, obj) {
  if (!Model) return [`no Kubernetes schema for ${obj.apiVersion} ${obj.kind}`];
  const seen = [];
  const errors = [];
  try {
    Model.prototype.validate.call(track(obj, '', seen));
  } catch (err) {
    const details = err && Array.isArray(err.errors) ? err.errors.map((e) => `${e.instancePath || '/'} ${e.message}`) : [String(err && err.message)];
    errors.push(...details);
  }
  for (const rec of seen) {
    if (rec.open) continue;
    for (const k of rec.keys) if (!rec.read.has(k)) errors.push(`${rec.at}/${k}: unknown field`);
  }
  return errors;
}

/** As a script (`--validate-stdin`): validates the object on stdin with an ES-module model; prints the errors as JSON. */
async function validateStdin() {
  const obj = JSON.parse(fs.readFileSync(0, 'utf8'));
  const [group, version] = apiGroupVersion(obj);
  let Model;
  try {
    Model = (await import(`${ESM_MODELS[group]}/${group}/${version}`))[obj.kind];
  } catch {
    Model = undefined;
  }
  process.stdout.write(JSON.stringify(validateWith(Model, obj)));
}

if (require.main === module && process.argv[2] === '--validate-stdin') {
  validateStdin().catch((err) => {
    process.stderr.write(String(err && err.stack));
    process.exit(1);
  });
}

module.exports = { parseManifests, validateObject, validateValues };
