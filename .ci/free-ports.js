#!/usr/bin/env node
// Prints N distinct TCP ports that are free now, on one line, all below the kernel's ephemeral
// range: a port from that range (what listen(0) gives) may be handed to an outgoing connection
// in the seconds before the server that was meant to use it starts, which then cannot listen.
'use strict';
const fs = require('node:fs');
const net = require('node:net');

const count = Number(process.argv[2] ?? 1);
let ephemeralFrom = 32768;
try {
  ephemeralFrom = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralFrom;
} catch {
  // Not Linux: its default range starts at 32768 too.
}
const low = 10000;
const high = Math.max(low + 1000, ephemeralFrom);
const held = [];

function next() {
  if (held.length === count) {
    console.log(held.map((s) => s.address().port).join(' '));
    for (const s of held) s.close();
    return;
  }
  const port = low + Math.floor(Math.random() * (high - low));
  // Held open until all are picked, so no two picks are the same port.
  const server = net.createServer();
  server.once('error', next);
  server.listen(port, '0.0.0.0', () => {
    held.push(server);
    next();
  });
}
next();
