/**
 * The embedded Postgres default: PGlite (Postgres compiled to WASM) served on a loopback
 * socket by pglite-socket, so `pg` talks to it exactly as to a real server. Used when
 * DATABASE_URL is unset. Each service embeds its own instance under MURMUR_DATA_DIR/<service>
 * — services never share tables, so they need not share a database. PGlite runs one
 * transaction at a time across all connections: never hold a transaction open while awaiting
 * another connection.
 *
 * `searchPath` must be a trusted identifier list (the caller validates schema names).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { createCluster } from './embedded-cluster-template';

export interface EmbeddedPostgres {
  url: string;
  /** How many connections the multiplexer accepts; size the pool to it. */
  maxConnections: number;
  stop(): Promise<void>;
}

/**
 * Starts PGlite on 127.0.0.1 with an OS-chosen port. `dataDir` undefined keeps everything in
 * memory (tests); otherwise the folder is created and reused across restarts.
 */
export async function startEmbeddedPostgres(dataDir?: string, searchPath?: string): Promise<EmbeddedPostgres> {
  if (dataDir) fs.mkdirSync(path.resolve(dataDir), { recursive: true });
  // A new cluster starts from a cached empty one instead of running initdb (embedded-cluster-template.ts).
  const db = await createCluster(dataDir ? path.resolve(dataDir) : undefined);
  // PGlite has a single backend session shared by every socket connection, so a session
  // setting made here holds for all of them.
  if (searchPath) await db.exec(`SET search_path TO ${searchPath}`);
  const maxConnections = 8;
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  const conn = server.getServerConn(); // "127.0.0.1:PORT"
  return {
    url: `postgres://postgres@${conn}/postgres?sslmode=disable`,
    maxConnections,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
