'use strict';
// Proto3 JSON decoding of a config with Envoy's strictness: unknown fields, types, enums,
// oneofs, deprecated fields, typed_config resolution and protoc-gen-validate rules.
const { loadEnvoyApi } = require('./api');
const { HCM, TYPED_STRUCTS, TYPE_URL_PREFIX } = require('./names');
const { durationSeconds, isPlainObject, rulesOf, WRAPPERS } = require('./proto-json');
const { ruleMethods } = require('./rules');

// ---------------------------------------------------------------------------------------------
// Proto3 JSON decoding with Envoy's strictness

/** Well-known types whose JSON is not an object of their fields. */
const SPECIAL_JSON = new Set([
  'google.protobuf.Any',
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.ListValue',
  'google.protobuf.Value',
]);

const INT_RANGES = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${JSON.stringify(value)}`;
}


function jsonName(name) {
  return name.replace(/_([a-z0-9])/g, (_m, c) => c.toUpperCase());
}

function editDistance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length][b.length];
}

function suggestion(key, candidates) {
  let best = null;
  for (const c of candidates) {
    const dist = editDistance(key, c);
    if (dist <= Math.max(2, Math.floor(key.length / 4)) && (!best || dist < best.dist)) best = { c, dist };
  }
  return best ? ` (did you mean "${best.c}"?)` : '';
}

const CLUSTER_REFERENCES = [
  ['envoy.config.route.v3.RouteAction', 'cluster', 'http'],
  ['envoy.config.route.v3.WeightedCluster.ClusterWeight', 'name', 'http'],
  ['envoy.config.route.v3.RouteAction.RequestMirrorPolicy', 'cluster', 'http'],
  ['envoy.config.core.v3.GrpcService.EnvoyGrpc', 'cluster_name', 'grpc'],
  ['envoy.config.core.v3.HttpUri', 'cluster', 'http'],
  ['envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', 'cluster', 'tcp'],
];

class Decoder {
  constructor(root) {
    this.root = root;
    this.errors = [];
    /** Every cluster named anywhere: { name, path, via }. */
    this.clusterRefs = [];
    /** Every HttpConnectionManager: { path, value }. */
    this.connectionManagers = [];
    this.typedConfigs = 0;
    this.jsonNames = new Map();
  }

  error(p, message) {
    this.errors.push({ path: p, message });
  }

  fieldByKey(type, key) {
    if (type.fields[key]) return type.fields[key];
    if (!this.jsonNames.has(type)) {
      this.jsonNames.set(type, new Map(type.fieldsArray.map((f) => [f.getOption('json_name') || jsonName(f.name), f])));
    }
    return this.jsonNames.get(type).get(key);
  }

  /** Decodes `value` as message `type`; returns it with proto field names (Any keeps "@type"). */
  message(type, value, p) {
    const special = this.wellKnown(type, value, p);
    if (special !== undefined) return special.value;
    if (!isPlainObject(value)) {
      this.error(p, `expected an object (${type.fullName.slice(1)}), got ${describe(value)}`);
      return undefined;
    }
    const out = {};
    /** Fields given in the config, decodable or not (a bad value is reported once, not as missing). */
    const given = new Set();
    const oneofSet = new Map();
    for (const [key, raw] of Object.entries(value)) {
      const kp = p ? `${p}.${key}` : key;
      const field = this.fieldByKey(type, key);
      if (!field) {
        const names = type.fieldsArray.map((f) => f.name);
        this.error(kp, `unknown field "${key}" in ${type.fullName.slice(1)}${suggestion(key, names)}`);
        continue;
      }
      if (Object.prototype.hasOwnProperty.call(out, field.name)) {
        this.error(kp, `field "${field.name}" is given twice (as "${field.name}" and "${jsonName(field.name)}")`);
        continue;
      }
      if (raw === null && field.type !== 'google.protobuf.Value' && field.resolvedType?.fullName !== '.google.protobuf.Value') continue;
      if (field.getOption('deprecated')) {
        this.error(kp, `field "${field.name}" of ${type.fullName.slice(1)} is deprecated; use its replacement`);
      }
      const oneof = field.partOf;
      if (oneof && !oneof.name.startsWith('_')) {
        if (oneofSet.has(oneof.name)) {
          this.error(kp, `"${field.name}" and "${oneofSet.get(oneof.name)}" are both set, but only one of oneof "${oneof.name}" may be`);
        }
        oneofSet.set(oneof.name, field.name);
      }
      given.add(field.name);
      out[field.name] = this.field(field, raw, kp);
    }
    this.validateMessage(type, out, given, value, p);
    this.afterMessage(type, out, p);
    return out;
  }

  field(field, raw, p) {
    if (field.map) {
      if (!isPlainObject(raw)) {
        this.error(p, `expected a map (object), got ${describe(raw)}`);
        return undefined;
      }
      const out = {};
      for (const [k, v] of Object.entries(raw)) {
        this.mapKey(field.keyType, k, `${p}.${k}`);
        out[k] = this.single(field, v, `${p}.${k}`);
      }
      return out;
    }
    if (field.repeated) {
      if (!Array.isArray(raw)) {
        this.error(p, `expected a list, got ${describe(raw)}`);
        return undefined;
      }
      return raw.map((item, i) => this.single(field, item, `${p}[${i}]`));
    }
    return this.single(field, raw, p);
  }

  mapKey(keyType, key, p) {
    if (keyType === 'string') return;
    if (keyType === 'bool') {
      if (key !== 'true' && key !== 'false') this.error(p, `map key must be "true" or "false", got ${JSON.stringify(key)}`);
      return;
    }
    this.scalar(keyType, /^-?\d+$/.test(key) ? key : NaN, p);
  }

  single(field, raw, p) {
    const { protobuf } = loadEnvoyApi();
    if (field.resolvedType instanceof protobuf.Type) return this.message(field.resolvedType, raw, p);
    if (field.resolvedType instanceof protobuf.Enum) return this.enumValue(field.resolvedType, raw, p);
    return this.scalar(field.type, raw, p);
  }

  enumValue(en, raw, p) {
    const name = en.fullName.slice(1);
    if (name === 'google.protobuf.NullValue' && raw === null) return 'NULL_VALUE';
    if (typeof raw === 'string') {
      if (!Object.prototype.hasOwnProperty.call(en.values, raw)) {
        this.error(p, `bad enum value ${JSON.stringify(raw)} for ${name}; one of ${Object.keys(en.values).join(', ')}${suggestion(raw, Object.keys(en.values))}`);
        return undefined;
      }
      if (en.valuesOptions?.[raw]?.deprecated) this.error(p, `enum value ${raw} of ${name} is deprecated`);
      return raw;
    }
    if (typeof raw === 'number' && Number.isInteger(raw)) {
      const known = Object.entries(en.values).find(([, v]) => v === raw);
      if (!known) {
        this.error(p, `bad enum number ${raw} for ${name}; one of ${Object.entries(en.values).map(([k, v]) => `${k}=${v}`).join(', ')}`);
        return undefined;
      }
      return known[0];
    }
    this.error(p, `expected an enum name of ${name}, got ${describe(raw)}`);
    return undefined;
  }

  scalar(type, raw, p) {
    switch (type) {
      case 'string':
        if (typeof raw !== 'string') this.error(p, `expected a string, got ${describe(raw)}${typeof raw === 'number' || typeof raw === 'boolean' ? ' (quote it)' : ''}`);
        return raw;
      case 'bytes':
        if (typeof raw !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(raw)) this.error(p, `expected base64 bytes, got ${describe(raw)}`);
        return raw;
      case 'bool':
        if (typeof raw !== 'boolean') this.error(p, `expected true or false, got ${describe(raw)}`);
        return raw;
      case 'double':
      case 'float': {
        const ok = (typeof raw === 'number' && Number.isFinite(raw)) || (typeof raw === 'string' && (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw) || ['NaN', 'Infinity', '-Infinity'].includes(raw)));
        if (!ok) this.error(p, `expected a number, got ${describe(raw)}`);
        return typeof raw === 'string' ? Number(raw) : raw;
      }
      default: {
        const range = INT_RANGES[type];
        if (!range) {
          this.error(p, `unsupported scalar type ${type}`);
          return raw;
        }
        const is64 = typeof range[0] === 'bigint';
        let n;
        if (typeof raw === 'number' && Number.isInteger(raw)) n = is64 ? BigInt(raw) : raw;
        else if (typeof raw === 'string' && /^-?\d+$/.test(raw)) n = is64 ? BigInt(raw) : Number(raw);
        else {
          this.error(p, `expected an integer (${type}), got ${describe(raw)}`);
          return undefined;
        }
        if (n < range[0] || n > range[1]) {
          this.error(p, `${raw} is out of range for ${type}`);
          return undefined;
        }
        return is64 ? Number(n) : n;
      }
    }
  }

  /** Types with their own JSON form; undefined when `type` is an ordinary message. */
  wellKnown(type, value, p) {
    const name = type.fullName.slice(1);
    if (WRAPPERS[name]) return { value: this.scalar(WRAPPERS[name], value, p) };
    switch (name) {
      case 'google.protobuf.Duration':
        if (typeof value !== 'string' || durationSeconds(value) === null) {
          this.error(p, `expected a duration such as "1.5s" (seconds with an "s", up to 9 decimals), got ${describe(value)}`);
        }
        return { value };
      case 'google.protobuf.Timestamp':
        if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/.test(value)) {
          this.error(p, `expected an RFC 3339 timestamp, got ${describe(value)}`);
        }
        return { value };
      case 'google.protobuf.FieldMask':
        if (typeof value !== 'string') this.error(p, `expected a field mask string, got ${describe(value)}`);
        return { value };
      case 'google.protobuf.Struct':
        if (!isPlainObject(value)) this.error(p, `expected an object (google.protobuf.Struct), got ${describe(value)}`);
        return { value };
      case 'google.protobuf.ListValue':
        if (!Array.isArray(value)) this.error(p, `expected a list (google.protobuf.ListValue), got ${describe(value)}`);
        return { value };
      case 'google.protobuf.Value':
        return { value };
      case 'google.protobuf.Any':
        return { value: this.any(value, p) };
      default:
        return undefined;
    }
  }

  /** An Any: look its @type up among Envoy's types and decode the rest as that message. */
  any(value, p) {
    if (!isPlainObject(value)) {
      this.error(p, `expected an object with "@type" (google.protobuf.Any), got ${describe(value)}`);
      return undefined;
    }
    const typeUrl = value['@type'];
    if (typeof typeUrl !== 'string' || !typeUrl.startsWith(TYPE_URL_PREFIX)) {
      this.error(p, `an Any needs "@type": "${TYPE_URL_PREFIX}<message>", got ${describe(typeUrl)}`);
      return undefined;
    }
    const typeName = typeUrl.slice(TYPE_URL_PREFIX.length);
    const type = this.lookupType(typeName);
    if (!type) {
      this.error(`${p}.@type`, `unknown @type ${JSON.stringify(typeName)}: not a message of Envoy's v3 API (@grpc/grpc-js-xds ${loadEnvoyApi().version})`);
      return undefined;
    }
    this.typedConfigs += 1;
    const { '@type': _ignored, ...rest } = value;
    let decoded;
    if (SPECIAL_JSON.has(typeName) || WRAPPERS[typeName]) {
      // A type with its own JSON form sits under "value" (proto3 JSON mapping of Any).
      for (const k of Object.keys(rest).filter((key) => key !== 'value')) this.error(`${p}.${k}`, `unknown field "${k}" in an Any of ${typeName}`);
      decoded = this.wellKnown(type, rest.value, `${p}.value`).value;
    } else if (TYPED_STRUCTS.has(typeName)) {
      decoded = this.typedStruct(rest, p);
    } else {
      decoded = this.message(type, rest, p);
    }
    return isPlainObject(decoded) ? { '@type': typeName, ...decoded } : { '@type': typeName, value: decoded };
  }

  /** TypedStruct: Envoy decodes `value` as the message named by `type_url`. */
  typedStruct(rest, p) {
    const unknown = Object.keys(rest).filter((k) => k !== 'type_url' && k !== 'typeUrl' && k !== 'value');
    for (const k of unknown) this.error(`${p}.${k}`, `unknown field "${k}" in TypedStruct`);
    const url = rest.type_url ?? rest.typeUrl;
    if (typeof url !== 'string' || !url.startsWith(TYPE_URL_PREFIX)) {
      this.error(`${p}.type_url`, `a TypedStruct needs type_url "${TYPE_URL_PREFIX}<message>"`);
      return undefined;
    }
    return this.any({ '@type': url, ...(isPlainObject(rest.value) ? rest.value : {}) }, `${p}.value`);
  }

  /** The message with exactly this full name (protobufjs would also match a bare name anywhere). */
  lookupType(name) {
    try {
      const type = this.root.lookupType(`.${name}`);
      return type.fullName === `.${name}` ? type : null;
    } catch {
      return null;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Facts collected for the semantic checks

  afterMessage(type, out, p) {
    const name = type.fullName.slice(1);
    for (const [refType, field, via] of CLUSTER_REFERENCES) {
      if (name === refType && typeof out[field] === 'string' && out[field] !== '') {
        this.clusterRefs.push({ name: out[field], path: `${p}.${field}`, via });
      }
    }
    if (name === HCM) this.connectionManagers.push({ path: p, value: out });
    if (name === 'envoy.extensions.transport_sockets.tls.v3.TlsCertificate') {
      for (const secret of ['private_key', 'password']) {
        const source = out[secret];
        if (source && (source.inline_bytes !== undefined || source.inline_string !== undefined)) {
          this.error(`${p}.${secret}`, `${secret} is inline: keep keys out of the config (mount a Secret and use "filename")`);
        }
      }
    }
    if (name === 'envoy.config.core.v3.SubstitutionFormatString') {
      const text = JSON.stringify([out.text_format, out.json_format, out.text_format_source]);
      if (/%(REQ|REQUEST_HEADER|REQ_WITHOUT_QUERY)\(\s*authorization\s*[):?]/i.test(text)) {
        this.error(p, 'the access log prints the Authorization header: API keys must never reach a log');
      }
    }
  }
}


// The protoc-gen-validate rules live in rules.js.
Object.assign(Decoder.prototype, ruleMethods);

module.exports = { Decoder, suggestion };
