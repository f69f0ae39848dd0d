/**
 * The conversion service process: murmur.conversion.v1.ConversionService over gRPC (plus
 * health and reflection) on GRPC_LISTEN_ADDR or CONVERSION_ADDR. Stateless (no database): it
 * charges through billing at BILLING_ADDR and stores artifacts through library at
 * LIBRARY_ADDR, holding the credits of a running conversion as a lease it renews
 * (MURMUR_HOLD_LEASE_SECONDS), so a killed process's holds return within one lease. The engine is MURMUR_CONVERSION_ENGINE (local by default; llama loads a GGUF
 * from MURMUR_MODELS_DIR; openai calls OPENAI_BASE_URL). Drains on SIGTERM.
 */
import './tracing';
import { createServiceClients, runServiceProcess } from '@murmur/kit';
import { createEngine, loadConversionConfig, startConversionService } from './index';

runServiceProcess({
  name: 'conversion',
  migrationsDir: null,
  address: (cfg) => cfg.CONVERSION_ADDR,
  async start({ cfg, log, identity, access }, address) {
    const own = loadConversionConfig();
    const engine = createEngine(own);
    // Library responses carry whole transcripts: the kit's library client accepts large messages.
    const { billing: billingClient, library: libraryClient } = createServiceClients(cfg, { deadlineMs: cfg.GRPC_DEADLINE_MS, identity: identity.minter }, ['billing', 'library']);
    const server = await startConversionService({
      access,
      log,
      address,
      billing: billingClient,
      library: libraryClient,
      engine,
      engineTimeoutMs: own.MURMUR_CONVERSION_TIMEOUT_MS,
      leaseSeconds: own.MURMUR_HOLD_LEASE_SECONDS,
    });
    log.info({ engine: engine.name, timeout_ms: own.MURMUR_CONVERSION_TIMEOUT_MS }, 'conversion engine ready');
    return {
      async stop() {
        await server.stop();
        billingClient.close();
        libraryClient.close();
        await engine.close?.();
      },
    };
  },
});
