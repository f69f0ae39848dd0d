'use strict';
// Proto3 JSON pieces shared by the decoder and the validate rules.

const WRAPPERS = {
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
};

const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;
const MAX_DURATION_SECONDS = 315576000000;

/** A Duration string → seconds as a number (enough precision for bounds), or null if malformed. */
function durationSeconds(text) {
  const m = DURATION.exec(text);
  if (!m) return null;
  const seconds = Number(m[2]) + (m[3] ? Number(`0.${m[3]}`) : 0);
  if (seconds > MAX_DURATION_SECONDS) return null;
  return m[1] ? -seconds : seconds;
}

/** protoc-gen-validate rules of a field or oneof, merged from its parsed options. */
function rulesOf(reflected, option) {
  const merged = {};
  for (const entry of reflected.parsedOptions || []) {
    if (entry && Object.prototype.hasOwnProperty.call(entry, option)) deepMerge(merged, entry[option]);
  }
  return merged;
}

/** A JSON object (not an array or null). */
function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function deepMerge(into, from) {
  if (!isPlainObject(from)) return into;
  for (const [k, v] of Object.entries(from)) {
    if (isPlainObject(v) && isPlainObject(into[k])) deepMerge(into[k], v);
    else into[k] = isPlainObject(v) ? deepMerge({}, v) : v;
  }
  return into;
}

/** Types whose fields name clusters: [type, field, how the cluster is spoken to]. */

module.exports = { WRAPPERS, durationSeconds, isPlainObject, rulesOf };
