/**
 * The library service process: murmur.library.v1.LibraryService over gRPC (plus health and
 * reflection) on GRPC_LISTEN_ADDR or LIBRARY_ADDR, backed by the "library" schema of Postgres
 * (DATABASE_URL) or an embedded PGlite under MURMUR_DATA_DIR/library. Drains on SIGTERM.
 */
import './tracing';
import { runServiceProcess } from '@murmur/kit';
import { LIBRARY_MIGRATIONS_DIR, startLibraryService } from './index';

runServiceProcess({
  name: 'library',
  migrationsDir: LIBRARY_MIGRATIONS_DIR,
  address: (cfg) => cfg.LIBRARY_ADDR,
  start: ({ db, log, cfg, access }, address) => startLibraryService({ db, log, address, access, cursorSecret: cfg.MURMUR_CURSOR_SECRET }),
});
