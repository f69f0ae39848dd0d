/**
 * The transcription service process: gRPC murmur.transcription.v1.TranscriptionService (plus
 * health and reflection) on GRPC_LISTEN_ADDR or TRANSCRIPTION_ADDR. Its own Postgres schema
 * (DATABASE_URL, else an embedded PGlite under MURMUR_DATA_DIR/transcription) holds the
 * transcription jobs and their pg-boss queue; every replica is a worker of that queue
 * (MURMUR_JOB_*), with the jobs' audio in MURMUR_AUDIO_DIR.
 * It decodes uploads with ffmpeg into per-call temp folders under its own instance folder
 * (MURMUR_TRANSCRIBE_TMP_DIR/murmur-transcription/<instance>; the folders of dead instances
 * are removed at start and every heartbeat), recognises them with the engine of
 * MURMUR_TRANSCRIPTION_ENGINE (pocketsphinx, whisper or an OpenAI-compatible endpoint) and
 * charges through billing at BILLING_ADDR, holding the credits as a lease renewed while the
 * call runs (MURMUR_HOLD_LEASE_SECONDS). Owners' webhook signing secrets are sealed with
 * MURMUR_WEBHOOK_SECRET_KEY (or _FILE); per-user caps count in Redis when REDIS_URL is set.
 * Start-up fails with
 * one line naming the Debian package or model that is missing. Drains on SIGTERM.
 */
import './tracing';
import * as os from 'node:os';
import { createServiceClients, loadConfig, outboundPolicyOf, runServiceProcess } from '@murmur/kit';
import { createEngineFromConfig, openAudioStore, probeEngines, transcriptionConfigSchema, webhookSecretSealerOf } from './config';
import { RedisLeaseSet } from './caller-limits';
import { startTranscriptionService, TRANSCRIPTION_MIGRATIONS_DIR } from './index';
import { openInstanceSpool } from './spool';
import { diarizationPort } from './diarization/port';

runServiceProcess({
  name: 'transcription',
  migrationsDir: TRANSCRIPTION_MIGRATIONS_DIR,
  address: (cfg) => cfg.TRANSCRIPTION_ADDR,
  start: async ({ cfg, log, identity, access, db, redis }, address) => {
    const own = loadConfig(transcriptionConfigSchema);
    const webhookSecrets = webhookSecretSealerOf(own);
    if (!redis) log.info('REDIS_URL unset: per-user caps on event streams and webhook retries are in-process (exact for one transcription replica only)');
    const { engine, name } = await createEngineFromConfig(own, { onNativeError: (line) => log.warn({ engine: 'whisper' }, line) });
    const engines = await probeEngines(own, name);
    log.info({ engine: name, model: engine.model, concurrency: own.MURMUR_TRANSCRIBE_CONCURRENCY }, 'speech engine ready');
    const spool = await openInstanceSpool(own.MURMUR_TRANSCRIBE_TMP_DIR ?? os.tmpdir(), { log });
    // Billing calls are short; the audio work itself is bounded by the client's deadline.
    const { billing: billingClient, library: libraryClient } = createServiceClients(cfg, { deadlineMs: cfg.GRPC_DEADLINE_MS, identity: identity.minter }, ['billing', 'library']);
    const audio = await openAudioStore(own, cfg.MURMUR_DATA_DIR);
    const diarization = diarizationPort(own.MURMUR_MODELS_DIR, { onLog: (line) => log.warn({ component: 'diarizer' }, line) });
    const server = await startTranscriptionService({
      access,
      log,
      address,
      billing: billingClient,
      engine,
      engines,
      concurrency: own.MURMUR_TRANSCRIBE_CONCURRENCY,
      uploadIdleMs: own.MURMUR_TRANSCRIBE_UPLOAD_IDLE_MS,
      ffmpegPath: own.MURMUR_FFMPEG_PATH,
      maxAudioSeconds: own.MURMUR_TRANSCRIBE_MAX_AUDIO_SECONDS,
      tmpDir: spool.dir,
      leaseSeconds: own.MURMUR_HOLD_LEASE_SECONDS,
      // Speakers from MURMUR_MODELS_DIR (`npm run models -- fetch diarization`); checked per call,
      // the diarizer process starts with the first call that needs it.
      diarization,
      jobs: {
        db,
        audio,
        library: libraryClient,
        cursorSecret: cfg.MURMUR_CURSOR_SECRET,
        work: own.MURMUR_JOB_WORKER === '1',
        queue: {
          concurrency: own.MURMUR_JOB_CONCURRENCY,
          heartbeatSeconds: own.MURMUR_JOB_HEARTBEAT_SECONDS,
          superviseSeconds: own.MURMUR_JOB_SUPERVISE_SECONDS,
          retryLimit: own.MURMUR_JOB_RETRY_LIMIT,
        },
        webhookSecrets,
        ...(redis ? { leases: new RedisLeaseSet(redis) } : {}),
        webhooks: {
          policy: outboundPolicyOf('MURMUR_WEBHOOK', own),
          allowHttp: own.MURMUR_WEBHOOK_ALLOW_HTTP === 'true',
          ...(own.MURMUR_WEBHOOK_RETRY_SECONDS ? { retrySeconds: own.MURMUR_WEBHOOK_RETRY_SECONDS.split(',').map(Number) } : {}),
        },
      },
    });
    return {
      async stop() {
        await server.stop();
        billingClient.close();
        libraryClient.close();
        await engine.close?.();
        await diarization.close();
        await spool.close();
        audio.close?.();
      },
    };
  },
});
