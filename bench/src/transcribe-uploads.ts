/**
 * transcribe (b): one upload of the contract's 500 MB, generated on the fly with backpressure
 * (multipart, or base64 JSON), streamed through the gateway while the RSS of the gateway and
 * the transcription service is sampled.
 */
import { RssSampler, type RssReport } from './rss';
import { describe, type BenchUser, type Stack } from './stack';
import { base64Length, base64Pieces, bigWav, multipartFrame, postStream, rawPieces } from './transcribe-audio';

const round = (x: number, digits = 2) => Number(x.toFixed(digits));

export interface UploadResult {
  body_bytes: number;
  audio_bytes: number;
  status: number;
  upload_seconds: number;
  total_seconds: number;
  upload_mb_per_second: number;
  duration_seconds?: number;
  credits_charged?: number;
  error?: string;
  rss: Record<string, RssReport>;
}

/** (b) One 500 MB upload streamed from a generator while RSS is sampled. */
export async function bigUpload(
  stack: Stack,
  user: BenchUser,
  kind: 'multipart' | 'base64_json',
  opts: { uploadBytes: number; rssIntervalMs: number },
  log: (line: string) => void,
): Promise<UploadResult> {
  const wav = bigWav(opts.uploadBytes);
  let headers: Record<string, string>;
  let length: number;
  let pieces: Iterable<Buffer | string>;
  if (kind === 'multipart') {
    const frame = multipartFrame('silence-192k.wav', 'audio/wav');
    headers = { ...user.headers, 'content-type': frame.contentType };
    length = frame.head.length + opts.uploadBytes + frame.tail.length;
    pieces = (function* () {
      yield frame.head;
      yield* rawPieces(wav.header, wav.zeroBytes);
      yield frame.tail;
    })();
  } else {
    const open = '{"audio_base64":"';
    const close = '"}';
    headers = { ...user.headers, 'content-type': 'application/json' };
    length = open.length + base64Length(opts.uploadBytes) + close.length;
    pieces = (function* () {
      yield open;
      yield* base64Pieces(wav.header, wav.zeroBytes);
      yield close;
    })();
  }
  const pids = stack.procs.pids();
  const watched = { gateway: pids.gateway!, transcription: pids.transcription! };
  const sampler = new RssSampler(watched, opts.rssIntervalMs);
  log(`(b) ${kind}: ${(length / 1e6).toFixed(0)} MB body (${opts.uploadBytes / 1e6} MB of audio) …`);
  sampler.start();
  let r: Awaited<ReturnType<typeof postStream>> | undefined;
  let error: string | undefined;
  try {
    r = await stack.procs.whileAlive(postStream(`${stack.gateway}/api/v1/transcribe`, headers, length, pieces));
  } catch (err) {
    error = describe(err);
  }
  const rss = sampler.stop();
  let parsed: { duration_seconds?: number; credits_charged?: number } = {};
  try {
    parsed = r ? (JSON.parse(r.body) as typeof parsed) : {};
  } catch {
    // reported through status / error
  }
  const result: UploadResult = {
    body_bytes: length,
    audio_bytes: opts.uploadBytes,
    status: r?.status ?? 0,
    upload_seconds: round((r?.upload_ms ?? 0) / 1000),
    total_seconds: round((r?.total_ms ?? 0) / 1000),
    upload_mb_per_second: r ? round(length / 1e6 / (r.upload_ms / 1000), 1) : 0,
    rss,
    ...(parsed.duration_seconds !== undefined ? { duration_seconds: parsed.duration_seconds } : {}),
    ...(parsed.credits_charged !== undefined ? { credits_charged: parsed.credits_charged } : {}),
    ...(error ? { error } : r && r.status !== 200 ? { error: r.body.slice(0, 300) } : {}),
  };
  log(
    `(b) ${kind}: ${result.status} in ${result.total_seconds} s (upload ${result.upload_seconds} s); peak RSS gateway ${rss.gateway?.peak_mb} MB, transcription ${rss.transcription?.peak_mb} MB`,
  );
  return result;
}
