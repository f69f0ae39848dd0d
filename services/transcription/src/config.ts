/**
 * The transcription process's own configuration and engine choice, with the start-up checks
 * that turn a missing Debian package or model into one readable line instead of a failure on
 * the first request.
 *
 * MURMUR_TRANSCRIPTION_ENGINE=auto picks whisper when a ggml model is in MURMUR_MODELS_DIR
 * (MURMUR_WHISPER_MODEL, or the first ggml-*.bin by name), pocketsphinx otherwise; openai is
 * only ever chosen explicitly.
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { holdLeaseSchema, outboundConfigSchema, z } from '@murmur/kit';
import type { transcription } from '@murmur/proto';
import { FFMPEG_PACKAGE } from './audio-files';
import { FileAudioStore, type AudioStore } from './jobs/audio-store';
import { S3AudioStore } from './jobs/s3-audio-store';
import type { SpeechEngine } from './engines/engine';
import { createOpenAiEngine } from './engines/openai';
import { ENGINE_CAPABILITIES, openAiCapabilities, whisperCapabilities } from './engines/capabilities';
import { createPocketsphinxEngine, DEBIAN_POCKETSPHINX_MODEL_DIR, DEFAULT_VAD_THRESHOLD, pocketsphinxModelFiles, POCKETSPHINX_MAX_CHUNK_SECONDS, POCKETSPHINX_PACKAGES } from './engines/pocketsphinx';
import { createWhisperEngine, whisperModelName } from './engines/whisper';
import { sileroVadPath } from './live/silero-vad';
import type { WindowedLiveOptions } from './live/windowed-recognizer';
import { commandExists } from './process';
import { SecretSealer, secretKeysProblem } from './webhooks/secret-keys';

export const ENGINE_NAMES = ['pocketsphinx', 'whisper', 'openai'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** The variables this service reads besides the shared ones of the kit. */
export const transcriptionConfigSchema = {
  MURMUR_TRANSCRIPTION_ENGINE: z.enum(['auto', ...ENGINE_NAMES]).default('auto'),
  /** Model files (ggml-*.bin for whisper); shared with the models CLI. */
  MURMUR_MODELS_DIR: z.string().default('./models'),
  /** A file name in MURMUR_MODELS_DIR; default the first ggml-*.bin found. */
  MURMUR_WHISPER_MODEL: z.string().optional(),
  /** The ffmpeg binary (a name on PATH or a path). */
  MURMUR_FFMPEG_PATH: z.string().default('ffmpeg'),
  /** The pocketsphinx_continuous binary (a name on PATH or a path). */
  MURMUR_POCKETSPHINX_PATH: z.string().default('pocketsphinx_continuous'),
  MURMUR_POCKETSPHINX_MODEL_DIR: z.string().default(DEBIAN_POCKETSPHINX_MODEL_DIR),
  /** pocketsphinx `-vad_threshold`; see engines/pocketsphinx.ts for the measurements behind 3.5. */
  MURMUR_POCKETSPHINX_VAD_THRESHOLD: z.coerce.number().positive().default(DEFAULT_VAD_THRESHOLD),
  /**
   * Longest chunk one pocketsphinx process recognises (10–90 s; 90 by default, see engines/pocketsphinx.ts).
   * A job records its progress and its resume points per chunk, so shorter chunks mean finer
   * progress and less audio recognised again after a worker dies, at a little accuracy.
   */
  MURMUR_POCKETSPHINX_MAX_CHUNK_SECONDS: z.coerce.number().int().min(10).max(POCKETSPHINX_MAX_CHUNK_SECONDS).default(POCKETSPHINX_MAX_CHUNK_SECONDS),
  OPENAI_BASE_URL: z.string().url().default('https://api.openai.com'),
  OPENAI_API_KEY: z.string().optional(),
  MURMUR_OPENAI_TRANSCRIBE_MODEL: z.string().default('whisper-1'),
  MURMUR_OPENAI_TIMEOUT_MS: z.coerce.number().int().positive().default(300_000),
  /** The OpenAI-compatible server gives word times (`timestamp_granularities[]=word`); false for one that does not. */
  MURMUR_OPENAI_WORDS: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Chunks recognised at once across all calls. */
  MURMUR_TRANSCRIBE_CONCURRENCY: z.coerce.number().int().positive().default(os.availableParallelism()),
  /** Parent of the spool: <dir>/murmur-transcription/<instance>/<call>/ (uploads up to 500 MB plus their PCM). */
  MURMUR_TRANSCRIBE_TMP_DIR: z.string().optional(),
  /** Longest decoded audio accepted (seconds); longer → audio_too_large. Default 12 h. */
  MURMUR_TRANSCRIBE_MAX_AUDIO_SECONDS: z.coerce.number().int().positive().default(12 * 60 * 60),
  /** An upload that sends nothing for this long is abandoned and its files removed. */
  MURMUR_TRANSCRIBE_UPLOAD_IDLE_MS: z.coerce.number().int().positive().default(120_000),
  ...holdLeaseSchema,
  /** Where queued jobs' audio waits: `file` (MURMUR_AUDIO_DIR) or `s3` (MURMUR_S3_*). */
  MURMUR_AUDIO_STORE: z.enum(['file', 's3']).default('file'),
  /** The file store's folder (default MURMUR_DATA_DIR/transcription-audio). */
  MURMUR_AUDIO_DIR: z.string().optional(),
  /** The S3 store: bucket, key prefix, an S3-compatible endpoint (MinIO…; empty → AWS), region, path-style URLs. */
  MURMUR_S3_BUCKET: z.string().optional(),
  MURMUR_S3_PREFIX: z.string().default('transcription-audio/'),
  MURMUR_S3_ENDPOINT: z.string().url().optional(),
  MURMUR_S3_REGION: z.string().default('us-east-1'),
  MURMUR_S3_FORCE_PATH_STYLE: z.enum(['0', '1']).optional(),
  /** Jobs this replica runs at once (each also shares the chunk slots above). */
  MURMUR_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** A worker that stops heartbeating for this long loses its job to another replica (≥ 10). */
  MURMUR_JOB_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(3600).default(30),
  /** How often each replica looks for such jobs. */
  MURMUR_JOB_SUPERVISE_SECONDS: z.coerce.number().int().min(1).max(3600).default(15),
  /** Attempts after the first before a job fails. */
  MURMUR_JOB_RETRY_LIMIT: z.coerce.number().int().min(0).max(10).default(3),
  /** 0 = this replica serves the job RPCs but runs no jobs. */
  MURMUR_JOB_WORKER: z.enum(['0', '1']).default('1'),
  /** Waits between webhook attempts, comma-separated seconds; unset: the standard schedule (webhooks/schedule.ts). */
  MURMUR_WEBHOOK_RETRY_SECONDS: z
    .string()
    .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'comma-separated seconds, such as 5,300,1800')
    .optional(),
  /** Where webhook endpoints may be: MURMUR_WEBHOOK_ALLOW_PRIVATE, _ALLOW_CIDRS, _PORTS (kit outbound.ts). */
  ...outboundConfigSchema('MURMUR_WEBHOOK'),
  /** Plain `http://` webhook endpoints too: a receiver on the developer's own machine. Off: https only. */
  MURMUR_WEBHOOK_ALLOW_HTTP: z.enum(['true', 'false']).default('false'),
  /**
   * The keys sealing webhook signing secrets at rest: `<key id>:<32 random bytes in base64>`,
   * several separated by commas (the first seals; all open). Or MURMUR_WEBHOOK_SECRET_KEY_FILE,
   * a file holding the same (one a line). One of the two is required; `npm start` makes a file.
   */
  MURMUR_WEBHOOK_SECRET_KEY: z
    .string()
    .superRefine((v, ctx) => {
      const problem = secretKeysProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  MURMUR_WEBHOOK_SECRET_KEY_FILE: z.string().optional(),
};

export type TranscriptionConfig = z.infer<z.ZodObject<typeof transcriptionConfigSchema>>;

/** Thrown at start-up; the message is the one line the operator reads. */
export class StartupError extends Error {}

/** The sealer of webhook signing secrets: MURMUR_WEBHOOK_SECRET_KEY, else the file MURMUR_WEBHOOK_SECRET_KEY_FILE names. */
export function webhookSecretSealerOf(cfg: Pick<TranscriptionConfig, 'MURMUR_WEBHOOK_SECRET_KEY' | 'MURMUR_WEBHOOK_SECRET_KEY_FILE'>): SecretSealer {
  if (cfg.MURMUR_WEBHOOK_SECRET_KEY) return SecretSealer.fromText(cfg.MURMUR_WEBHOOK_SECRET_KEY);
  const file = cfg.MURMUR_WEBHOOK_SECRET_KEY_FILE;
  if (!file) {
    throw new StartupError(
      'Webhook signing secrets are kept sealed: set MURMUR_WEBHOOK_SECRET_KEY to <key id>:<32 random bytes in base64> (e.g. "k1:$(openssl rand -base64 32)"), or MURMUR_WEBHOOK_SECRET_KEY_FILE to a file holding it (npm start makes one under ./data).',
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new StartupError(`MURMUR_WEBHOOK_SECRET_KEY_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const problem = secretKeysProblem(text);
  if (problem) throw new StartupError(`MURMUR_WEBHOOK_SECRET_KEY_FILE (${file}): ${problem}`);
  return SecretSealer.fromText(text);
}

/** The audio store of the configuration (file by default; S3 needs its bucket). */
export async function openAudioStore(cfg: TranscriptionConfig, dataDir: string): Promise<AudioStore> {
  if (cfg.MURMUR_AUDIO_STORE === 's3') {
    if (!cfg.MURMUR_S3_BUCKET) throw new StartupError('MURMUR_AUDIO_STORE=s3 needs MURMUR_S3_BUCKET (and credentials in the AWS SDK\'s usual variables or role).');
    return new S3AudioStore({
      bucket: cfg.MURMUR_S3_BUCKET,
      prefix: cfg.MURMUR_S3_PREFIX,
      region: cfg.MURMUR_S3_REGION,
      ...(cfg.MURMUR_S3_ENDPOINT ? { endpoint: cfg.MURMUR_S3_ENDPOINT } : {}),
      ...(cfg.MURMUR_S3_FORCE_PATH_STYLE ? { forcePathStyle: cfg.MURMUR_S3_FORCE_PATH_STYLE === '1' } : {}),
    });
  }
  return FileAudioStore.open(cfg.MURMUR_AUDIO_DIR ?? path.join(dataDir, 'transcription-audio'));
}

/** The whisper model file to use, or undefined when MURMUR_MODELS_DIR holds none. */
export async function findWhisperModel(cfg: Pick<TranscriptionConfig, 'MURMUR_MODELS_DIR' | 'MURMUR_WHISPER_MODEL'>): Promise<string | undefined> {
  const dir = path.resolve(cfg.MURMUR_MODELS_DIR);
  if (cfg.MURMUR_WHISPER_MODEL) return path.resolve(dir, cfg.MURMUR_WHISPER_MODEL);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  const first = names.filter((n) => /^ggml-.+\.bin$/.test(n)).sort()[0];
  return first ? path.join(dir, first) : undefined;
}

/**
 * Live streams of the batch engines: the Silero VAD model in MURMUR_MODELS_DIR (looked for when a
 * stream opens, so one fetched while the service runs is picked up), windows in the temp folder.
 */
function liveOptionsOf(cfg: TranscriptionConfig): WindowedLiveOptions {
  return { vadModel: sileroVadPath(cfg.MURMUR_MODELS_DIR), ...(cfg.MURMUR_TRANSCRIBE_TMP_DIR ? { tmpDir: cfg.MURMUR_TRANSCRIBE_TMP_DIR } : {}) };
}

/** The engine `auto` resolves to. */
export async function chooseEngine(cfg: TranscriptionConfig): Promise<EngineName> {
  if (cfg.MURMUR_TRANSCRIPTION_ENGINE !== 'auto') return cfg.MURMUR_TRANSCRIPTION_ENGINE;
  return (await findWhisperModel(cfg)) ? 'whisper' : 'pocketsphinx';
}

const isDefaultOpenAi = (cfg: TranscriptionConfig) => new URL(cfg.OPENAI_BASE_URL).hostname === 'api.openai.com';

/** Whether each engine can run here, for ListEngines (cheap: no model is loaded). */
export async function probeEngines(cfg: TranscriptionConfig, active: EngineName): Promise<transcription.Engine[]> {
  const pocketsphinx = await (async (): Promise<transcription.Engine> => {
    const model = path.basename(cfg.MURMUR_POCKETSPHINX_MODEL_DIR);
    if (!(await commandExists(cfg.MURMUR_POCKETSPHINX_PATH, []))) {
      return { name: 'pocketsphinx', model, available: false, detail: `${cfg.MURMUR_POCKETSPHINX_PATH} is not installed: ${POCKETSPHINX_PACKAGES}`, capabilities: ENGINE_CAPABILITIES.pocketsphinx };
    }
    try {
      await pocketsphinxModelFiles(cfg.MURMUR_POCKETSPHINX_MODEL_DIR);
      return { name: 'pocketsphinx', model, available: true, detail: '', capabilities: ENGINE_CAPABILITIES.pocketsphinx };
    } catch (err) {
      return { name: 'pocketsphinx', model, available: false, detail: (err as Error).message, capabilities: ENGINE_CAPABILITIES.pocketsphinx };
    }
  })();
  const modelPath = await findWhisperModel(cfg);
  const whisper: transcription.Engine = modelPath
    ? { name: 'whisper', model: whisperModelName(modelPath), available: true, detail: '', capabilities: whisperCapabilities(whisperModelName(modelPath)) }
    : { name: 'whisper', model: '', available: false, detail: `no ggml-*.bin model in ${cfg.MURMUR_MODELS_DIR}; fetch one with \`npm run models -- fetch base.en\``, capabilities: ENGINE_CAPABILITIES.whisper };
  const openaiReady = !isDefaultOpenAi(cfg) || !!cfg.OPENAI_API_KEY;
  const openai: transcription.Engine = {
    name: 'openai',
    model: cfg.MURMUR_OPENAI_TRANSCRIBE_MODEL,
    available: openaiReady,
    detail: openaiReady ? '' : 'set OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)',
    capabilities: openAiCapabilities(cfg.MURMUR_OPENAI_WORDS),
  };
  // The active engine passed its start-up checks, whatever the cheap probe says.
  return [pocketsphinx, whisper, openai].map((e) => (e.name === active ? { ...e, available: true, detail: '' } : e));
}

/**
 * Checks ffmpeg and the chosen engine and creates it. Fails with a {@link StartupError} naming
 * the Debian package, model file or variable that is missing.
 */
export async function createEngineFromConfig(
  cfg: TranscriptionConfig,
  hooks: { onNativeError?: (line: string) => void } = {},
): Promise<{ engine: SpeechEngine; name: EngineName }> {
  if (!(await commandExists(cfg.MURMUR_FFMPEG_PATH))) {
    throw new StartupError(`ffmpeg is not installed (it decodes every upload); install it: ${FFMPEG_PACKAGE}`);
  }
  const name = await chooseEngine(cfg);
  switch (name) {
    case 'pocketsphinx': {
      if (!(await commandExists(cfg.MURMUR_POCKETSPHINX_PATH, []))) {
        throw new StartupError(`pocketsphinx is not installed (the default speech engine); install it: ${POCKETSPHINX_PACKAGES}`);
      }
      try {
        await pocketsphinxModelFiles(cfg.MURMUR_POCKETSPHINX_MODEL_DIR);
      } catch (err) {
        throw new StartupError((err as Error).message);
      }
      return { name, engine: createPocketsphinxEngine({
          binary: cfg.MURMUR_POCKETSPHINX_PATH,
          modelDir: cfg.MURMUR_POCKETSPHINX_MODEL_DIR,
          vadThreshold: cfg.MURMUR_POCKETSPHINX_VAD_THRESHOLD,
          maxChunkSeconds: cfg.MURMUR_POCKETSPHINX_MAX_CHUNK_SECONDS,
        }) };
    }
    case 'whisper': {
      const modelPath = await findWhisperModel(cfg);
      if (!modelPath) {
        throw new StartupError(`MURMUR_TRANSCRIPTION_ENGINE=whisper but ${cfg.MURMUR_MODELS_DIR} holds no ggml-*.bin model; fetch one with \`npm run models -- fetch base.en\``);
      }
      try {
        const engine = await createWhisperEngine({
          modelPath,
          threads: cfg.MURMUR_TRANSCRIBE_CONCURRENCY,
          live: liveOptionsOf(cfg),
          ...(hooks.onNativeError ? { onNativeError: hooks.onNativeError } : {}),
        });
        return { name, engine };
      } catch (err) {
        throw new StartupError((err as Error).message);
      }
    }
    case 'openai': {
      if (isDefaultOpenAi(cfg) && !cfg.OPENAI_API_KEY) {
        throw new StartupError('MURMUR_TRANSCRIPTION_ENGINE=openai needs OPENAI_API_KEY (or OPENAI_BASE_URL pointing at an OpenAI-compatible server)');
      }
      const engine = createOpenAiEngine({
        baseUrl: cfg.OPENAI_BASE_URL,
        model: cfg.MURMUR_OPENAI_TRANSCRIBE_MODEL,
        timeoutMs: cfg.MURMUR_OPENAI_TIMEOUT_MS,
        words: cfg.MURMUR_OPENAI_WORDS,
        live: liveOptionsOf(cfg),
        ...(cfg.OPENAI_API_KEY ? { apiKey: cfg.OPENAI_API_KEY } : {}),
      });
      return { name, engine };
    }
  }
}
