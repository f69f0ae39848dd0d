/** Runs cleanup once on SIGTERM/SIGINT, in order, then exits; a second signal exits at once. */
import type { Logger } from './log';

const finalSteps: Array<() => Promise<void>> = [];

/** A step every process runs last on shutdown, after its own (tracing flushes its spans here). */
export function addFinalShutdownStep(step: () => Promise<void>): void {
  finalSteps.push(step);
}

export function onShutdown(log: Logger, steps: Array<() => Promise<void>>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    (async () => {
      for (const step of [...steps, ...finalSteps]) {
        try {
          await step();
        } catch (err) {
          log.error({ err: (err as Error).message }, 'shutdown step failed');
        }
      }
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
