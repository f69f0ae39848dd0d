/** Reading what a user types or pipes: all of stdin, or a secret typed without echo. */
import type { Stdin } from './command.js';
import { CliError, EXIT } from './exit-codes.js';
import type { TtyStream } from './progress.js';

/** All of stdin as UTF-8 text. */
export async function readAll(stdin: Stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A line typed on the terminal without echo (a key): raw mode, so nothing typed is shown;
 * Backspace erases, Enter (or Ctrl-D) ends, Ctrl-C gives up with exit 130.
 */
export function readSecret(prompt: string, stdin: Stdin, stderr: TtyStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    stderr.write(prompt);
    stdin.setRawMode?.(true);
    stdin.setEncoding('utf8');
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (data: string | Buffer) => {
      for (const ch of String(data)) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(new CliError('Canceled.', EXIT.interrupted));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else if (ch >= ' ') typed += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}
