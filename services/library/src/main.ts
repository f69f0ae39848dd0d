/**
 * The library service process: murmur.library.v1.LibraryService over gRPC (plus health and
 * reflection) on GRPC_LISTEN_ADDR or LIBRARY_ADDR, backed by the "library" schema of Postgres
 * (DATABASE_URL) or an embedded PGlite under MURMUR_DATA_DIR/library. Drains on SIGTERM.
 */
import * as path from 'node:path';
import { commonSchema, createLogger, loadConfig, onShutdown, openDatabase, serviceAddressSchema, storageSchema } from '@murmur/kit';
import { startLibraryService } from './index';

async function main(): Promise<void> {
  const cfg = loadConfig({ ...serviceAddressSchema, ...storageSchema, ...commonSchema });
  const log = createLogger('library', cfg.LOG_LEVEL);
  const db = await openDatabase({
    schema: 'library',
    migrationsDir: path.resolve(__dirname, '../migrations'),
    url: cfg.DATABASE_URL,
    embeddedDataDir: path.join(cfg.MURMUR_DATA_DIR, 'library'),
    log,
  });
  const server = await startLibraryService({ db, log, address: cfg.GRPC_LISTEN_ADDR ?? cfg.LIBRARY_ADDR, cursorSecret: cfg.MURMUR_CURSOR_SECRET });
  onShutdown(log, [server.stop, db.close]);
}

main().catch((err: unknown) => {
  // Start-up failures (bad config, unreachable database) end the process with a readable line.
  process.stderr.write(`library failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});
