import { Supervisor } from '../src/supervisor';

const node = process.execPath;

describe('supervisor', () => {
  it('prefixes output, restarts a crashed child and stops every child on request', async () => {
    const lines: string[] = [];
    const sup = new Supervisor(
      [
        { name: 'crashy', command: node, args: ['-e', 'console.log("up"); setTimeout(() => process.exit(3), 50)'], env: process.env },
        { name: 'steady', command: node, args: ['-e', 'console.log("ready"); setInterval(() => {}, 1000)'], env: process.env },
      ],
      (l) => lines.push(l),
    );
    sup.startAll();
    const deadline = Date.now() + 10_000;
    while (lines.filter((l) => l === '[crashy] up').length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(lines.filter((l) => l === '[crashy] up').length).toBeGreaterThanOrEqual(2);
    expect(lines).toContain('[steady] ready');
    expect(lines.some((l) => l.startsWith('[crashy] exited (code 3); restarting in'))).toBe(true);
    const pid = sup.pid('steady')!;
    await sup.stopAll(2_000);
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe('supervisor handing a child its key', () => {
  it('writes the key to descriptor 3 at every start, and nothing when it cannot be read, saying so', async () => {
    const lines: string[] = [];
    let key: () => Buffer = () => Buffer.from('first key');
    // The child prints what it read on descriptor 3 (to its end), then exits 3 to be restarted.
    const script = "const fs = require('fs'); const k = fs.readFileSync(3, 'utf8'); fs.closeSync(3); console.log('read [' + k + ']'); setTimeout(() => process.exit(3), 20)";
    const sup = new Supervisor([{ name: 'keyed', command: node, args: ['-e', script], env: process.env, key: () => key() }], (l) => lines.push(l), {
      restartDelay: (attempt) => ({ delayMs: 10, nextAttempt: attempt + 1, giveUp: attempt >= 2 }),
    });
    sup.start('keyed');
    const deadline = Date.now() + 20_000;
    while (!lines.includes('[keyed] read [first key]') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    key = () => {
      throw new Error('ENOENT: no such file, open private/keyed.key');
    };
    while (!lines.includes('[keyed] read []') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await sup.stopAll(2_000);
    expect(lines).toContain('[keyed] read [first key]');
    expect(lines).toContain('[keyed] its workload key cannot be read: ENOENT: no such file, open private/keyed.key');
    expect(lines).toContain('[keyed] read []');
  });
});

describe('supervisor giving up', () => {
  /** Waits (generously, only to catch a hang) until `done` says so. */
  async function until(done: () => boolean): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  it('does not restart a child that cannot bind its port (exit 78), and says so', async () => {
    const lines: string[] = [];
    const gaveUp: Array<[string, boolean]> = [];
    const sup = new Supervisor([{ name: 'bound', command: node, args: ['-e', 'console.log("try"); process.exit(78)'], env: process.env }], (l) => lines.push(l), {
      onGiveUp: (name, { cannotBind }) => gaveUp.push([name, cannotBind]),
      restartDelay: () => ({ delayMs: 10, nextAttempt: 1, giveUp: false }),
    });
    sup.start('bound');
    await until(() => gaveUp.length > 0);
    // Were it restarted, a second "try" would come within the 10 ms delay; give it ample time.
    await new Promise((r) => setTimeout(r, 300));
    expect(gaveUp).toEqual([['bound', true]]);
    expect(lines.filter((l) => l === '[bound] try')).toHaveLength(1);
    expect(lines).toContain('[bound] exited (code 78): it cannot listen on its port; not restarting');
    await sup.stopAll(2_000);
  });

  it('gives up on a child that keeps crashing, once the restart policy says so', async () => {
    const lines: string[] = [];
    const gaveUp: Array<[string, boolean]> = [];
    const sup = new Supervisor([{ name: 'crashy', command: node, args: ['-e', 'console.log("up"); process.exit(3)'], env: process.env }], (l) => lines.push(l), {
      onGiveUp: (name, { cannotBind }) => gaveUp.push([name, cannotBind]),
      restartDelay: (attempt) => ({ delayMs: 10, nextAttempt: attempt + 1, giveUp: attempt >= 2 }),
    });
    sup.start('crashy');
    await until(() => gaveUp.length > 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(gaveUp).toEqual([['crashy', false]]);
    expect(lines.filter((l) => l === '[crashy] up')).toHaveLength(3);
    expect(lines).toContain('[crashy] exited (code 3) after 3 crashes in a row; not restarting');
    await sup.stopAll(2_000);
  });
});
