/**
 * Child processes (ffmpeg, pocketsphinx) the way the service needs them: killed when a signal
 * aborts, stderr kept only as a bounded tail of the lines worth logging (never audio or
 * transcript), and a missing binary reported as such.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last few stderr lines that matched `stderrFilter`. */
  stderrTail: string[];
}

export interface SpawnedProcess {
  child: ChildProcessByStdio<Writable | null, Readable, Readable>;
  /** Settles when the process has exited (never rejects; spawn errors resolve with code null). */
  done: Promise<RunResult & { spawnError?: NodeJS.ErrnoException }>;
}

/**
 * Starts `cmd` with stdin ignored (or a pipe, `stdin: 'pipe'`, for a process fed as it runs: the
 * live recognizer); SIGKILLs it when `signal` aborts.
 */
export function spawnProcess(
  cmd: string,
  args: string[],
  opts: { signal?: AbortSignal; stderrFilter?: (line: string) => boolean; tailLines?: number; stdin?: 'ignore' | 'pipe' } = {},
): SpawnedProcess {
  const child: SpawnedProcess['child'] =
    opts.stdin === 'pipe' ? spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] }) : spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const keep = opts.tailLines ?? 5;
  let partial = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (data: string) => {
    const lines = (partial + data).split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > 4096) partial = partial.slice(-4096);
    for (const line of lines) {
      if (opts.stderrFilter && !opts.stderrFilter(line)) continue;
      tail.push(line.slice(0, 500));
      if (tail.length > keep) tail.shift();
    }
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  if (opts.signal?.aborted) kill();
  else opts.signal?.addEventListener('abort', kill, { once: true });
  const done = new Promise<RunResult & { spawnError?: NodeJS.ErrnoException }>((resolve) => {
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err;
    });
    child.on('close', (code, sig) => {
      opts.signal?.removeEventListener('abort', kill);
      if (partial && (!opts.stderrFilter || opts.stderrFilter(partial))) tail.push(partial.slice(0, 500));
      resolve({ code, signal: sig, stderrTail: tail.slice(-keep), ...(spawnError ? { spawnError } : {}) });
    });
  });
  return { child, done };
}

/** True when `cmd` can be started (it may still exit non-zero for the given args). */
export async function commandExists(cmd: string, args: string[] = ['-version']): Promise<boolean> {
  const { done, child } = spawnProcess(cmd, args);
  child.stdout.resume();
  const result = await done;
  return !(result.spawnError && result.spawnError.code === 'ENOENT');
}
