/**
 * Validated environment configuration. Each process declares the variables it reads with a
 * zod schema built from the shared pieces here; a bad value fails at start-up with a message
 * naming the variable, never later in a request.
 */
import { z } from 'zod';

/** host:port of each service; the same variables are read by servers, clients and the CLI. */
export const serviceAddressSchema = {
  AUTH_ADDR: z.string().default('127.0.0.1:50051'),
  BILLING_ADDR: z.string().default('127.0.0.1:50052'),
  LIBRARY_ADDR: z.string().default('127.0.0.1:50053'),
  TRANSCRIPTION_ADDR: z.string().default('127.0.0.1:50054'),
  CONVERSION_ADDR: z.string().default('127.0.0.1:50055'),
};

/** Storage shared by every service: both optional; unset means the embedded defaults. */
export const storageSchema = {
  DATABASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  /** Where the embedded Postgres keeps its files when DATABASE_URL is unset. */
  MURMUR_DATA_DIR: z.string().default('./data'),
  /**
   * The workload keys (docs/authorization.md#keys, kit access/workload-identity.ts): a folder of
   * public keys, or `npm start`'s key store; default MURMUR_DATA_DIR/identity, where `npm start` makes it.
   */
  MURMUR_IDENTITY_DIR: z.string().optional(),
  /** This process's private key, when it is not in MURMUR_IDENTITY_DIR. */
  MURMUR_IDENTITY_KEY_FILE: z.string().min(1).optional(),
  /** The descriptor `npm start` wrote this process's private key to (read once at start, then closed). */
  MURMUR_IDENTITY_KEY_FD: z.coerce.number().int().min(3).optional(),
};

export const commonSchema = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Overrides the address a service listens on (default: its own *_ADDR). */
  GRPC_LISTEN_ADDR: z.string().optional(),
  /** Deadline of internal gRPC calls, in milliseconds. */
  GRPC_DEADLINE_MS: z.coerce.number().int().positive().default(10_000),
  /** HMAC key of page cursors; set the same value on every replica in production. */
  MURMUR_CURSOR_SECRET: z.string().min(16).default('murmur-dev-cursor-secret-change-me'),
};

export class ConfigError extends Error {}

/** Parses `env` with `shape`, throwing one readable error listing every bad variable. */
export function loadConfig<S extends z.ZodRawShape>(shape: S, env: NodeJS.ProcessEnv = process.env): z.infer<z.ZodObject<S>> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = z.object(shape).safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

export { z };
