/**
 * Queued jobs' audio in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, GCS's XML API…), for
 * replicas on several machines without a shared volume. Objects are `<prefix><job id>`; a job's
 * object is written once at submission, read by the worker that takes the job (downloaded to its
 * scratch folder, ffmpeg needs a seekable file), and deleted when the job ends. Credentials come
 * from the SDK's standard chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a web identity, an
 * instance role), never from our own config.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { isId } from '@murmur/contract';
import { checkAudioKey, type AudioStore } from './audio-store';

export interface S3AudioStoreOptions {
  bucket: string;
  /** Key prefix of the objects, e.g. `transcription-audio/`. */
  prefix?: string;
  /** An S3-compatible endpoint (MinIO, …); absent → AWS S3 of `region`. */
  endpoint?: string;
  region?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Explicit credentials (tests); production uses the SDK's default chain. */
  credentials?: S3ClientConfig['credentials'];
}

export class S3AudioStore implements AudioStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: S3AudioStoreOptions) {
    this.client = new S3Client({
      region: opts.region ?? 'us-east-1',
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      forcePathStyle: opts.forcePathStyle ?? Boolean(opts.endpoint),
      // The SDK's default since 2025 streams a PUT as `aws-chunked` with a trailing CRC, which
      // S3-compatible servers (older MinIO, Ceph RGW, s3rver) store framing and all: with an
      // endpoint of our own, checksums only where the API requires them (AWS's advice for them).
      ...(opts.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
    });
    this.bucket = opts.bucket;
    this.prefix = opts.prefix ?? 'transcription-audio/';
  }

  private objectKey(key: string): string {
    return `${this.prefix}${checkAudioKey(key)}`;
  }

  async put(key: string, localPath: string): Promise<void> {
    const { size } = await stat(localPath);
    // One PUT (up to 5 GB), streamed from the file: the upload is never in memory.
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: createReadStream(localPath), ContentLength: size }));
  }

  async localFile(key: string, scratchDir: string): Promise<string> {
    const out = path.join(scratchDir, `audio-${checkAudioKey(key)}`);
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    if (!res.Body) throw new Error(`the audio of ${key} is empty in the store`);
    await pipeline(res.Body as Readable, createWriteStream(out));
    return out;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async list(): Promise<Array<{ key: string; storedAt: Date }>> {
    const out: Array<{ key: string; storedAt: Date }> = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const o of page.Contents ?? []) {
        const key = (o.Key ?? '').slice(this.prefix.length);
        if (isId('trn', key)) out.push({ key, storedAt: o.LastModified ?? new Date(0) });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  close(): void {
    this.client.destroy();
  }
}
