/**
 * The audio side of an upload, shared by the multipart and JSON readers: a pull-based Readable
 * (the consumer's pace pauses the body reader), the size limit counted on decoded bytes, and
 * the one place that settles the outcome — resolve on the first audio byte, reject before it,
 * destroy the stream with the error after it.
 */
import { Readable } from 'node:stream';
import { invalidParam, MurmurError } from '@murmur/contract';
import type { AudioUploadFields } from './upload-fields';
import { abortError } from '../http/client-gone';

/** What the body reader knows about the audio once it starts. */
export interface UploadDescription {
  /** The options read so far; the reader keeps adding to it until the body ends. */
  fields: AudioUploadFields;
  /** Whether `language` had been read when the audio began. */
  languageKnown: boolean;
  filename: string;
  contentType: string;
}

/** How an UploadStream drives the reader of a body kind. */
export interface BodyReader {
  /** Called at the first audio byte. */
  describe(): UploadDescription;
  /** The consumer wants more: resume reading the body. */
  pull(): void;
  /** Stop reading the body for good (called once, on success or failure). */
  stop(failed: boolean): void;
}

export interface UploadStreamOptions {
  maxBytes: number;
  /** The body parameter that carries the audio, named in its errors. */
  param: string;
  /** Called once when the upload settles, after the reader has stopped. */
  onSettled?(): void;
  /** Opens the audio of an `audio_url` option (a body with no audio of its own). */
  openUrl?(url: string): Promise<{ stream: Readable; filename: string; contentType: string }>;
}

const ONE_WAY = () => invalidParam('audio_url', 'Send the audio one way: in the body (`audio` or `audio_base64`) or by `audio_url`, not both.');

export type UploadResult = UploadDescription & { audio: Readable };

const AUDIO_HIGH_WATER_MARK = 64 * 1024;

export class UploadStream {
  readonly audio: Readable;
  readonly ready: Promise<UploadResult>;
  private state: 'waiting' | 'flowing' | 'ended' | 'failed' = 'waiting';
  private bytes = 0;
  private reader: BodyReader | null = null;
  private resolve!: (result: UploadResult) => void;
  private reject!: (err: unknown) => void;

  constructor(private readonly opts: UploadStreamOptions) {
    this.ready = new Promise<UploadResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.audio = new Readable({
      highWaterMark: AUDIO_HIGH_WATER_MARK,
      read: () => {
        if (!this.settled) this.reader?.pull();
      },
    });
    // A failure between resolution and the consumer attaching (say, while it checks a folder)
    // must not crash the process; pipeline(), finished() and for-await still see the error.
    this.audio.on('error', () => {});
    this.audio.on('close', () => {
      if (!this.settled) this.fail(abortError('The audio stream was closed by its consumer.'));
    });
  }

  /** Connects the body reader; done before it reads anything. */
  attach(reader: BodyReader): void {
    this.reader = reader;
  }

  /** True once the body has been fully read or the upload has failed. */
  get settled(): boolean {
    return this.state === 'ended' || this.state === 'failed';
  }

  /**
   * Hands on decoded audio. Returns false when the consumer is behind (pause the source until
   * `pull`). Throws `audio_too_large` as soon as the total passes the limit.
   */
  push(chunk: Buffer): boolean {
    if (this.settled) return false;
    if (this.state === 'waiting' && this.describe().fields.audio_url !== undefined) throw ONE_WAY();
    this.bytes += chunk.length;
    if (this.bytes > this.opts.maxBytes) {
      throw new MurmurError('audio_too_large', `The audio is larger than ${formatSize(this.opts.maxBytes)}. Split it into shorter files.`, {
        param: this.opts.param,
      });
    }
    const more = this.audio.push(chunk);
    if (this.state === 'waiting') {
      this.state = 'flowing';
      this.resolve({ ...this.describe(), audio: this.audio });
    }
    return more;
  }

  /**
   * The body ended and was valid: end the audio; with no audio but an `audio_url`, open that
   * and answer its audio instead; with neither, fail with `missing_audio`.
   */
  finish(): void {
    if (this.settled) return;
    const url = this.reader ? this.describe().fields.audio_url : undefined;
    if (url !== undefined && this.bytes > 0) {
      this.fail(ONE_WAY());
      return;
    }
    if (url !== undefined) {
      this.openUrl(url);
      return;
    }
    if (this.bytes === 0) {
      this.fail(new MurmurError('missing_audio', undefined, { param: this.opts.param }));
      return;
    }
    this.state = 'ended';
    this.stop(false);
    this.audio.push(null);
  }

  fail(err: unknown): void {
    if (this.settled) return;
    const waiting = this.state === 'waiting';
    this.state = 'failed';
    this.stop(true);
    if (waiting) {
      this.reject(err);
      this.audio.destroy();
    } else {
      this.audio.destroy(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** The body is read; the audio comes from `url` (fetched only now, after every option was read and found valid). */
  private openUrl(url: string): void {
    const { fields } = this.describe();
    if (!this.opts.openUrl) {
      this.fail(invalidParam('audio_url', '`audio_url` is not accepted here.'));
      return;
    }
    this.state = 'ended';
    this.stop(false);
    this.audio.destroy();
    this.opts.openUrl(url).then(
      (fetched) => this.resolve({ fields, languageKnown: true, filename: fetched.filename, contentType: fetched.contentType || 'application/octet-stream', audio: fetched.stream }),
      this.reject,
    );
  }

  private describe(): UploadDescription {
    if (!this.reader) throw new Error('UploadStream: no reader attached');
    return this.reader.describe();
  }

  private stop(failed: boolean): void {
    this.reader?.stop(failed);
    this.opts.onSettled?.();
  }
}

function formatSize(bytes: number): string {
  const MiB = 1024 * 1024;
  if (bytes % MiB === 0) return `${bytes / MiB} MB`;
  if (bytes % 1_000_000 === 0) return `${bytes / 1_000_000} MB`;
  return `${bytes} bytes`;
}
