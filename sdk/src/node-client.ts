/**
 * The client in Node (and Bun, Deno): the web client plus what only a server runtime has — a
 * file path read as it is sent (`fs.openAsBlob`, never loaded whole) and uploads through
 * `node:http`, whose backpressure keeps memory flat (node-upload.ts).
 */
import { openAsBlob } from 'node:fs';
import { Murmur as WebMurmur } from './client.js';
import { nodeUpload } from './node-upload.js';
import type { Platform } from './platform.js';

export const NODE_PLATFORM: Platform = { openFile: (path) => openAsBlob(path), upload: nodeUpload };

/** {@link WebMurmur} with Node's platform. */
export class Murmur extends WebMurmur {
  protected static override readonly platform: Platform = NODE_PLATFORM;
}
