'use strict';
// The Grafana dashboard (files/grafana-dashboard.json): the metric names its PromQL reads, and
// what the offline check asks of it. Which names a running process really exports is
// gateway/test/metrics.test.ts's to check, with this file's promqlMetricNames.

/** PromQL words that are not metric names. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless', 'inf', 'nan']);

/** Prefixes of every metric the processes export: Murmur's own, and prom-client's process metrics. */
const METRIC_PREFIXES = ['murmur_', 'process_', 'nodejs_'];

/**
 * The metric names one PromQL expression reads: identifiers left once strings, label matchers,
 * ranges, grouping lists and Grafana variables are removed, that are neither a function (followed
 * by `(`), a keyword, nor part of a number.
 */
function promqlMetricNames(expr) {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ');
  const names = new Set();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = bare[m.index - 1] || ' ';
    if (/[0-9.]/.test(before)) continue;
    if (bare.slice(m.index + m[0].length).trimStart().startsWith('(')) continue;
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Every expression of the dashboard: its panels' targets (rows' panels too) and its variables' queries. */
function dashboardExpressions(dashboard) {
  const exprs = [];
  const walk = (panels) => {
    for (const p of panels || []) {
      for (const t of p.targets || []) if (typeof t.expr === 'string') exprs.push(t.expr);
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  for (const v of (dashboard.templating || {}).list || []) {
    const q = typeof v.query === 'string' ? v.query : v.query && v.query.query;
    const m = typeof q === 'string' && /^label_values\(\s*([^,)]+)\s*,/.exec(q);
    if (m) exprs.push(m[1]);
  }
  return exprs;
}

/** The metric names the dashboard reads, histogram series (_bucket, _count, _sum) as their metric's. */
function dashboardMetricNames(dashboard) {
  const names = new Set();
  for (const expr of dashboardExpressions(dashboard)) for (const n of promqlMetricNames(expr)) names.add(n);
  return [...names].sort();
}

/** What the offline check asks of the dashboard text: JSON, unique panel ids, every query on the datasource variable and a known prefix. */
function dashboardErrors(text) {
  let dashboard;
  try {
    dashboard = JSON.parse(text);
  } catch (e) {
    return [`the dashboard is not JSON: ${e.message}`];
  }
  const errors = [];
  const ids = new Set();
  const walk = (panels) => {
    for (const p of panels || []) {
      if (ids.has(p.id)) errors.push(`panel id ${p.id} is used twice`);
      ids.add(p.id);
      for (const t of p.targets || []) {
        if (!t.datasource || t.datasource.uid !== '${datasource}') errors.push(`panel "${p.title}": a query not on the datasource variable`);
        if (typeof t.expr !== 'string' || t.expr.trim() === '') errors.push(`panel "${p.title}": a query without an expression`);
      }
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  if (!((dashboard.templating || {}).list || []).some((v) => v.type === 'datasource' && v.name === 'datasource')) errors.push('no datasource variable');
  for (const name of dashboardMetricNames(dashboard)) {
    if (!METRIC_PREFIXES.some((p) => name.startsWith(p))) errors.push(`the dashboard reads ${name}, which no Murmur process exports (${METRIC_PREFIXES.join(', ')}…)`);
  }
  return errors;
}

module.exports = { dashboardErrors, dashboardMetricNames, promqlMetricNames };
