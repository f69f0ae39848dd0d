/**
 * The duration of an upload without decoding it: ffprobe reads the container's header, so a
 * 2-hour file is priced and queued in milliseconds. Containers that do not state a duration
 * (a browser's MediaRecorder WebM, raw streams) answer undefined; the caller then decodes.
 */
import { FFMPEG_FORMAT_WHITELIST } from '../audio-files';
import { spawnProcess } from '../process';

/** ffprobe's binary next to the configured ffmpeg (`ffmpeg` → `ffprobe`, `/opt/x/ffmpeg` → `/opt/x/ffprobe`). */
export function ffprobeNextTo(ffmpegPath = 'ffmpeg'): string {
  return ffmpegPath.replace(/ffmpeg([^/]*)$/, 'ffprobe$1');
}

/** Seconds of the first audio stream, or undefined when the file does not say; throws when ffprobe cannot read it. */
export async function probeDuration(file: string, opts: { ffprobePath?: string; signal?: AbortSignal } = {}): Promise<number | undefined> {
  const args = [
    '-v', 'error', '-protocol_whitelist', 'file', '-format_whitelist', FFMPEG_FORMAT_WHITELIST,
    '-select_streams', 'a:0', '-show_entries', 'stream=duration:format=duration', '-of', 'json', file,
  ];
  const proc = spawnProcess(opts.ffprobePath ?? 'ffprobe', args, { ...(opts.signal ? { signal: opts.signal } : {}), tailLines: 3 });
  let out = '';
  proc.child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const result = await proc.done;
  if (result.spawnError) throw new Error(`ffprobe could not start: ${result.spawnError.message}`);
  if (result.code !== 0) throw new UnreadableAudio(result.stderrTail.join(' | '));
  const parsed = JSON.parse(out || '{}') as { streams?: Array<{ duration?: string }>; format?: { duration?: string } };
  if (!parsed.streams?.length) throw new UnreadableAudio('no audio stream');
  const seconds = Number(parsed.streams[0]?.duration ?? parsed.format?.duration);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/** ffprobe found no readable audio. */
export class UnreadableAudio extends Error {}
