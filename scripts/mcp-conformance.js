#!/usr/bin/env node
// Runs the official MCP conformance server suite (@modelcontextprotocol/conformance) against a
// running Murmur gateway, once per protocol revision /mcp serves: the scenarios 2026-07-28
// requires (`--requirements`), then those of 2025-11-25 and 2025-06-18 (`--spec-version`), each
// against its revision's baseline in gateway/conformance/. The suite's client sends no credentials, so a small loopback proxy
// adds `Authorization: Bearer <key>` to every request (and passes everything else, Origin
// included, through unchanged). Scenarios that need the suite's own fixture tools, resources,
// prompts or features a tools-only server does not offer are listed, with reasons, in
// gateway/conformance/expected-failures-<revision>.yml. Fails when any revision fails.
//
// With MURMUR_APP_URL, the app's authorization-server metadata is checked too.
//
// Usage: MURMUR_BASE_URL=http://localhost:8080 MURMUR_API_KEY=svc_… [MURMUR_APP_URL=http://localhost:3000] node scripts/mcp-conformance.js [--revision 2026-07-28] [--scenario NAME] [--verbose]
'use strict';
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');

const base = new URL(process.env.MURMUR_BASE_URL || 'http://localhost:8080');
const key = process.env.MURMUR_API_KEY;
if (!key) {
  console.error('Set MURMUR_API_KEY to a key of the running gateway.');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');

const proxy = http.createServer((req, res) => {
  const headers = { ...req.headers, host: base.host };
  if (!headers.authorization) headers.authorization = `Bearer ${key}`;
  const upstream = http.request({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers }, (up) => {
    res.writeHead(up.statusCode || 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', (err) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`proxy: ${err.message}`);
  });
  req.pipe(upstream);
});

/** Each revision: how the suite selects its scenarios, and the baseline it is held to. */
const REVISIONS = [
  { revision: '2026-07-28', select: ['--requirements', '2026-07-28'], baseline: 'expected-failures-2026-07-28.yml' },
  { revision: '2025-11-25', select: ['--spec-version', '2025-11-25'], baseline: 'expected-failures-2025-11-25.yml' },
  { revision: '2025-06-18', select: ['--spec-version', '2025-06-18'], baseline: 'expected-failures-2025-11-25.yml' },
];

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: path.join(root, 'gateway', 'conformance') });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

proxy.listen(0, '127.0.0.1', async () => {
  const { port } = proxy.address();
  const bin = path.join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const extra = process.argv.slice(2); // e.g. --revision 2026-07-28 --scenario NAME --verbose
  const only = extra.indexOf('--revision') >= 0 ? extra.splice(extra.indexOf('--revision'), 2)[1] : undefined;
  const failed = [];
  for (const r of REVISIONS.filter((x) => !only || x.revision === only)) {
    console.log(`\n### MCP ${r.revision}`);
    const selection = extra.includes('--scenario') ? ['--spec-version', r.revision] : r.select;
    const args = [bin, 'server', '--url', `http://127.0.0.1:${port}/mcp`, ...selection, '--expected-failures', path.join(root, 'gateway', 'conformance', r.baseline), ...extra];
    if ((await run(args)) !== 0) failed.push(r.revision);
  }
  // The app as the MCP server's authorization server: its RFC 8414 metadata (the code-grant
  // scenario needs a person at the consent screen; app/test/mcp-oauth-connector.test.ts drives it).
  if (process.env.MURMUR_APP_URL && !only && !extra.includes('--scenario')) {
    console.log('\n### OAuth authorization server (the app)');
    const args = [bin, 'authorization', '--url', process.env.MURMUR_APP_URL, '--scenario', 'authorization-server-metadata-endpoint'];
    if ((await run(args)) !== 0) failed.push('authorization server metadata');
  }
  proxy.close();
  if (failed.length > 0) console.error(`conformance failed on ${failed.join(', ')}`);
  process.exit(failed.length > 0 ? 1 : 0);
});
