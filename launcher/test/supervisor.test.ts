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
