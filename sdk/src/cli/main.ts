#!/usr/bin/env node
/**
 * The `murmur` command (the SDK package's bin): runs the command line with the process's own
 * streams and environment, and exits with the code the command answered (exit-codes.ts).
 */
import * as os from 'node:os';
import { run } from './program.js';

// `murmur recordings list | head`: a reader that leaves early is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  platform: process.platform,
  home: os.homedir(),
  onInterrupt(onSignal) {
    process.on('SIGINT', onSignal);
    return () => process.off('SIGINT', onSignal);
  },
});
