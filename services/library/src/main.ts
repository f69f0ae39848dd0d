/**
 * The library service process: murmur.library.v1.LibraryService over gRPC (plus health and
 * reflection) on GRPC_LISTEN_ADDR or LIBRARY_ADDR, backed by the "library" schema of Postgres
 * (DATABASE_URL) or an embedded PGlite under MURMUR_DATA_DIR/library. With MURMUR_EMBEDDINGS_URL
 * it embeds passages in the background and ranks search by text and vectors. Drains on SIGTERM.
 */
import './tracing';
import { runServiceProcess } from '@murmur/kit';
import { embeddingsFromConfig, LIBRARY_MIGRATIONS_DIR, loadLibraryConfig, startLibraryService } from './index';

const own = loadLibraryConfig();
const embeddings = embeddingsFromConfig(own);

runServiceProcess({
  name: 'library',
  migrationsDir: LIBRARY_MIGRATIONS_DIR,
  address: (cfg) => cfg.LIBRARY_ADDR,
  start: ({ db, log, cfg, access }, address) =>
    startLibraryService({ db, log, address, access, cursorSecret: cfg.MURMUR_CURSOR_SECRET, vectorIndex: own.MURMUR_VECTOR_INDEX, ...(embeddings ? { embeddings } : {}) }),
});
