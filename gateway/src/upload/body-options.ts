/** How the AI routes read request bodies (the gateway's settings, passed down from app.ts). */
import type { AudioUrlPolicy } from './fetch-audio';

export interface BodyOptions {
  /** MURMUR_BODY_IDLE_TIMEOUT_MS: a body that stops arriving this long answers 408 `request_timeout`. */
  bodyIdleTimeoutMs?: number;
  /** Where uploads are spooled when they must be (audio-spool.ts); default the OS temp dir (TMPDIR). */
  spoolDir?: string;
  /** Where an `audio_url` may point (MURMUR_AUDIO_URL_*); default public http(s) on 80/443 only. */
  audioUrlPolicy?: AudioUrlPolicy;
}
