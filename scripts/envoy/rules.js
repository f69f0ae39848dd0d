'use strict';
// protoc-gen-validate: the rules Envoy enforces when it loads a config (a subset), as methods the
// Decoder takes on (they report through its error()).
const { loadEnvoyApi } = require('./api');
const { durationSeconds, rulesOf, WRAPPERS } = require('./proto-json');

/** Numeric value of a validate.DurationRules bound. */
function durationRuleSeconds(rule) {
  return Number(rule?.seconds ?? 0) + Number(rule?.nanos ?? 0) / 1e9;
}

function asList(v) {
  return Array.isArray(v) ? v : [v];
}

const ruleMethods = {
  validateMessage(type, out, given, raw, p) {
    for (const oneof of type.oneofsArray) {
      if (oneof.getOption('(validate.required)') && !oneof.fieldsArray.some((f) => given.has(f.name))) {
        this.error(p, `${type.fullName.slice(1)} needs one of ${oneof.fieldsArray.map((f) => f.name).join(', ')}`);
      }
    }
    for (const field of type.fieldsArray) {
      const rules = rulesOf(field, '(validate.rules)');
      if (Object.keys(rules).length === 0) continue;
      // A value that did not decode has been reported already.
      if (given.has(field.name) && out[field.name] === undefined) continue;
      const present = out[field.name] !== undefined;
      const inOneof = field.partOf && field.partOf.fieldsArray.length > 0;
      if (inOneof && !present) continue;
      const key = Object.keys(raw).find((k) => this.fieldByKey(type, k) === field) ?? field.name;
      this.applyRules(field, rules, out[field.name], present, p ? `${p}.${key}` : key);
    }
  },

  applyRules(field, rules, value, present, p) {
    const { protobuf } = loadEnvoyApi();
    if (rules.message?.required && !present) {
      this.error(p, `required field "${field.name}" is missing`);
      return;
    }
    if (field.map) {
      const pairs = present ? Object.keys(value).length : 0;
      if (rules.map?.min_pairs !== undefined && pairs < Number(rules.map.min_pairs)) this.error(p, `needs at least ${rules.map.min_pairs} entries`);
      if (rules.map?.max_pairs !== undefined && pairs > Number(rules.map.max_pairs)) this.error(p, `allows at most ${rules.map.max_pairs} entries`);
      if (present && rules.map?.values) {
        for (const [k, v] of Object.entries(value)) this.applyRules({ ...field, map: false }, rules.map.values, v, v !== undefined, `${p}.${k}`);
      }
      return;
    }
    if (field.repeated) {
      const items = present ? value : [];
      if (rules.repeated?.min_items !== undefined && items.length < Number(rules.repeated.min_items)) {
        this.error(p, `needs at least ${rules.repeated.min_items} item(s)`);
      }
      if (rules.repeated?.max_items !== undefined && items.length > Number(rules.repeated.max_items)) {
        this.error(p, `allows at most ${rules.repeated.max_items} item(s)`);
      }
      if (rules.repeated?.items) {
        items.forEach((item, i) => this.applyRules({ name: field.name, resolvedType: field.resolvedType, type: field.type }, rules.repeated.items, item, item !== undefined, `${p}[${i}]`));
      }
      return;
    }
    const typeName = field.resolvedType ? field.resolvedType.fullName.slice(1) : field.type;
    if (rules.duration) {
      if (rules.duration.required && !present) return this.error(p, `required duration "${field.name}" is missing`);
      if (present && typeof value === 'string') this.bounds(durationSeconds(value), rules.duration, p, durationRuleSeconds, value);
      return;
    }
    if (rules.any) {
      if (rules.any.required && !present) this.error(p, `required field "${field.name}" is missing`);
      return;
    }
    if (rules.string && (present || !(field.resolvedType instanceof protobuf.Type))) {
      this.stringRules(rules.string, present ? value : '', p);
      return;
    }
    if (rules.enum) {
      const v = present ? value : Object.keys(field.resolvedType?.values ?? {})[0];
      if (rules.enum.in && !asList(rules.enum.in).includes(field.resolvedType.values[v])) this.error(p, `${v} is not allowed here`);
      if (rules.enum.not_in && asList(rules.enum.not_in).includes(field.resolvedType.values[v])) this.error(p, `${v} is not allowed here`);
      return;
    }
    const numeric = ['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'double', 'float'].find((t) => rules[t]);
    if (numeric) {
      const isWrapper = Boolean(WRAPPERS[typeName]);
      if (!present && isWrapper) return;
      this.bounds(present ? Number(value) : 0, rules[numeric], p, Number, present ? value : `"${field.name}" is unset (0) and`);
    }
  },

  /** lt/lte/gt/gte/const/in/not_in, including protoc-gen-validate's exclusive outer ranges. */
  bounds(v, rule, p, toNumber, shown) {
    if (v === null || v === undefined || Number.isNaN(v)) return;
    const lower = rule.gt !== undefined ? { n: toNumber(rule.gt), strict: true } : rule.gte !== undefined ? { n: toNumber(rule.gte), strict: false } : null;
    const upper = rule.lt !== undefined ? { n: toNumber(rule.lt), strict: true } : rule.lte !== undefined ? { n: toNumber(rule.lte), strict: false } : null;
    const aboveLower = !lower || (lower.strict ? v > lower.n : v >= lower.n);
    const belowUpper = !upper || (upper.strict ? v < upper.n : v <= upper.n);
    const describeBound = () =>
      [lower && `${lower.strict ? '>' : '>='} ${lower.n}`, upper && `${upper.strict ? '<' : '<='} ${upper.n}`].filter(Boolean).join(lower && upper && upper.n < lower.n ? ' or ' : ' and ');
    const ok = lower && upper && upper.n < lower.n ? aboveLower || belowUpper : aboveLower && belowUpper;
    if (!ok) this.error(p, `${shown} must be ${describeBound()}`);
    if (rule.const !== undefined && v !== toNumber(rule.const)) this.error(p, `${shown} must be ${rule.const}`);
    if (rule.in !== undefined && !asList(rule.in).map(toNumber).includes(v)) this.error(p, `${shown} must be one of ${asList(rule.in).join(', ')}`);
    if (rule.not_in !== undefined && asList(rule.not_in).map(toNumber).includes(v)) this.error(p, `${shown} is not allowed`);
  },

  stringRules(rule, v, p) {
    if (typeof v !== 'string') return;
    if (rule.ignore_empty && v === '') return;
    const chars = [...v].length;
    const bytes = Buffer.byteLength(v, 'utf8');
    const shown = JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
    if (rule.min_len !== undefined && chars < Number(rule.min_len)) this.error(p, v === '' ? 'must not be empty' : `${shown} is shorter than ${rule.min_len} characters`);
    if (rule.max_len !== undefined && chars > Number(rule.max_len)) this.error(p, `${shown} is longer than ${rule.max_len} characters`);
    if (rule.len !== undefined && chars !== Number(rule.len)) this.error(p, `${shown} must be exactly ${rule.len} characters`);
    if (rule.min_bytes !== undefined && bytes < Number(rule.min_bytes)) this.error(p, v === '' ? 'must not be empty' : `${shown} is shorter than ${rule.min_bytes} bytes`);
    if (rule.max_bytes !== undefined && bytes > Number(rule.max_bytes)) this.error(p, `${shown} is longer than ${rule.max_bytes} bytes`);
    if (rule.prefix !== undefined && !v.startsWith(rule.prefix)) this.error(p, `${shown} must start with ${JSON.stringify(rule.prefix)}`);
    if (rule.suffix !== undefined && !v.endsWith(rule.suffix)) this.error(p, `${shown} must end with ${JSON.stringify(rule.suffix)}`);
    if (rule.contains !== undefined && !v.includes(rule.contains)) this.error(p, `${shown} must contain ${JSON.stringify(rule.contains)}`);
    if (rule.not_contains !== undefined && v.includes(rule.not_contains)) this.error(p, `${shown} must not contain ${JSON.stringify(rule.not_contains)}`);
    if (rule.in !== undefined && !asList(rule.in).includes(v)) this.error(p, `${shown} must be one of ${asList(rule.in).join(', ')}`);
    if (rule.not_in !== undefined && asList(rule.not_in).includes(v)) this.error(p, `${shown} is not allowed`);
    if (rule.pattern !== undefined) {
      let re = null;
      try {
        re = new RegExp(rule.pattern, 'u');
      } catch {
        re = null; // an RE2 construct JavaScript lacks: Envoy checks it, we cannot
      }
      if (re && !re.test(v)) this.error(p, `${shown} does not match ${rule.pattern}`);
    }
    if (rule.well_known_regex !== undefined) {
      const strict = rule.strict !== false;
      const wk = rule.well_known_regex;
      let re;
      if (!strict) re = /^[^\0\n\r]*$/;
      else if (wk === 'HTTP_HEADER_NAME') re = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
      else if (wk === 'HTTP_HEADER_VALUE') re = /^[^\0-\x08\x0A-\x1F\x7F]*$/;
      if (re && !re.test(v)) this.error(p, `${shown} is not a valid ${wk === 'HTTP_HEADER_NAME' ? 'header name' : 'header value'}`);
    }
  },
};

module.exports = { ruleMethods };
