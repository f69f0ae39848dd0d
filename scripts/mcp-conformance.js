#!/usr/bin/env node
// Runs the official MCP conformance server suite (@modelcontextprotocol/conformance) against a
// running Murmur gateway. The suite's client sends no credentials, so a small loopback proxy
// adds `Authorization: Bearer <key>` to every request (and passes everything else, Origin
// included, through unchanged). Scenarios that need the suite's own fixture tools, resources,
// prompts or OAuth are listed, with reasons, in gateway/conformance/expected-failures.yml.
//
// Usage: MURMUR_BASE_URL=http://localhost:8080 MURMUR_API_KEY=svc_… node scripts/mcp-conformance.js [--scenario NAME] [--verbose]
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

proxy.listen(0, '127.0.0.1', () => {
  const { port } = proxy.address();
  const bin = path.join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const args = [bin, 'server', '--url', `http://127.0.0.1:${port}/mcp`, '--expected-failures', path.join(root, 'gateway', 'conformance', 'expected-failures.yml')];
  args.push(...process.argv.slice(2)); // e.g. --scenario NAME --verbose
  const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: path.join(root, 'gateway', 'conformance') });
  child.on('exit', (code) => {
    proxy.close();
    process.exit(code ?? 1);
  });
});
