/**
 * The repository's Dockerfile, checked against the repository itself (no Docker engine here):
 * one target per deployable that the Helm chart runs, each running `node <pkg>/dist/main.js` —
 * a file the TypeScript build produces — with its compiled workspace dependencies, its own
 * production node_modules, the files it reads at run time, and nothing run as root.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';

interface Instruction {
  keyword: string;
  args: string;
  flags: Record<string, string>;
  line: number;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}
const { parseDockerfile, execForm } = require('../../docker/dockerfile.js') as {
  parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] };
  execForm(args: string): string[] | null;
};
const { servicesWithMigrations } = require('../../docker/migrate.js') as { servicesWithMigrations(): Array<{ name: string }> };

const REPO = path.resolve(__dirname, '..', '..', '..');
const read = (p: string) => fs.readFileSync(path.join(REPO, p), 'utf8');
const dockerfile = parseDockerfile(read('Dockerfile'));
const stage = (name: string): Stage => {
  const s = dockerfile.stages.find((x) => x.name === name);
  if (!s) throw new Error(`Dockerfile has no stage ${name}`);
  return s;
};
const of = (s: Stage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword);
/** The stage and the stages it is built FROM, nearest first. */
const lineage = (s: Stage): Stage[] => {
  const parent = dockerfile.stages.find((x) => x.name === s.from);
  return parent ? [s, ...lineage(parent)] : [s];
};
/** COPY --from=<stage> sources of a target (its own or a parent stage's), as paths under /app. */
const copiedFrom = (s: Stage, from: string) =>
  lineage(s)
    .flatMap((x) => of(x, 'COPY'))
    .filter((i) => i.flags.from === from)
    .map((i) => (i.args.split(/\s+/)[0] ?? '').replace(/^\/app\//, ''));

interface Pkg {
  name: string;
  dir: string;
  dependencies: Record<string, string>;
}
const rootPkg = JSON.parse(read('package.json')) as { workspaces: string[]; engines: { node: string } };
/**
 * The runtime decision lives in one place, package.json `engines.node` (">=N"): the image
 * follows it, so moving the runtime is one edit there and one in the Dockerfile, not here.
 */
const nodeMajor = /^\s*(?:>=|\^|~)?\s*v?(\d+)/.exec(rootPkg.engines.node)?.[1];
if (!nodeMajor) throw new Error(`package.json engines.node "${rootPkg.engines.node}" names no Node major`);
const workspaces: Pkg[] = rootPkg.workspaces.map((dir) => {
  const p = JSON.parse(read(`${dir}/package.json`)) as { name: string; dependencies?: Record<string, string> };
  return { name: p.name, dir, dependencies: p.dependencies ?? {} };
});
/** What the chart deploys, by component name → workspace folder: the gateway and every service with a main. */
const deployables: Record<string, string> = Object.fromEntries(
  workspaces
    .filter((w) => (w.dir === 'gateway' || w.dir.startsWith('services/')) && fs.existsSync(path.join(REPO, w.dir, 'src/main.ts')))
    .map((w) => [path.basename(w.dir), w.dir]),
);
/** The @murmur workspaces `dir` needs at run time (production dependencies, transitively). */
function runtimeWorkspaces(dir: string): string[] {
  const out = new Set<string>();
  const visit = (d: string) => {
    const w = workspaces.find((x) => x.dir === d);
    if (!w) throw new Error(`no workspace ${d}`);
    for (const dep of Object.keys(w.dependencies)) {
      const dw = workspaces.find((x) => x.name === dep);
      if (dw && !out.has(dw.dir)) {
        out.add(dw.dir);
        visit(dw.dir);
      }
    }
  };
  visit(dir);
  return [...out].sort();
}

/** Docker's .dockerignore semantics, enough for ours: last matching pattern wins, parents count. */
function ignored(file: string): boolean {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const toRegex = (p: string) =>
    new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*\//g, '\u0000')
        .replace(/\*\*/g, '.*')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')
        .replace(/\u0000/g, '(?:.*/)?')}$`,
    );
  const parts = file.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let out = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const re = toRegex(negate ? raw.slice(1) : raw);
    if (prefixes.some((p) => re.test(p))) out = !negate;
  }
  return out;
}

describe('Dockerfile', () => {
  it('has one target per deployable, named as the Helm chart components, plus migrate', () => {
    const components = Object.entries((YAML.parse(read('deploy/helm/murmur/values.yaml')) as { components: Record<string, { kind: string }> }).components)
      .filter(([, c]) => c.kind !== 'envoy')
      .map(([n]) => n)
      .sort();
    expect(Object.keys(deployables).sort()).toEqual(components);
    const targets = dockerfile.stages.map((s) => s.name).filter((n) => !['manifests', 'build', 'native', 'runtime', 'base'].includes(n) && !n.startsWith('deps-'));
    expect(targets.sort()).toEqual([...components, 'migrate'].sort());
  });

  it(`builds everything on the Node major package.json engines.node names (node:${nodeMajor}-bookworm-slim)`, () => {
    expect(dockerfile.args.NODE_IMAGE).toBe(`node:${nodeMajor}-bookworm-slim`);
    const names = dockerfile.stages.map((s) => s.name);
    for (const s of dockerfile.stages) expect(s.from === '${NODE_IMAGE}' || names.includes(s.from)).toBe(true);
  });

  it.each(Object.entries(deployables))('runs %s as `node <package>/dist/main.js`, a file its build produces', (target, dir) => {
    const s = stage(target);
    const cmd = of(s, 'CMD').map((i) => execForm(i.args));
    expect(cmd).toEqual([['node', `${dir}/dist/main.js`]]);
    expect(of(s, 'ENTRYPOINT')).toEqual([]);
    // dist/main.js is what tsc makes of src/main.ts in this package…
    expect(fs.existsSync(path.join(REPO, dir, 'src/main.ts'))).toBe(true);
    const tsconfig = JSON.parse(read(`${dir}/tsconfig.json`)) as { compilerOptions: { rootDir: string; outDir: string } };
    expect(tsconfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    // …the build stage compiles this package, and the target takes its dist.
    const tsc = of(stage('build'), 'RUN').find((i) => i.args.includes('tsc -b'));
    expect(tsc?.args.split(/\s+/)).toContain(dir);
    expect(copiedFrom(s, 'build')).toContain(`${dir}/dist`);
  });

  it.each(Object.entries(deployables))('gives %s its compiled workspace dependencies and its own production node_modules', (target, dir) => {
    const s = stage(target);
    const fromBuild = copiedFrom(s, 'build');
    for (const dep of runtimeWorkspaces(dir)) {
      expect(fromBuild).toContain(`${dep}/dist`);
      expect(fromBuild).toContain(`${dep}/package.json`);
    }
    expect(copiedFrom(s, `deps-${target}`)).toEqual(['package.json', 'node_modules']);
    const install = of(stage(`deps-${target}`), 'RUN')[0]?.args ?? '';
    expect(install).toMatch(new RegExp(`npm install --omit=dev .*--workspace=${dir}( |$)`));
  });

  it('ships the .proto sources every gRPC server reflects, and each schema owner its migrations', () => {
    for (const [target, dir] of Object.entries(deployables)) {
      if (target === 'gateway') continue;
      const fromBuild = copiedFrom(stage(target), 'build');
      expect(fromBuild).toEqual(expect.arrayContaining(['proto/murmur', 'proto/google']));
      const hasMigrations = fs.existsSync(path.join(REPO, dir, 'migrations'));
      expect(fromBuild.includes(`${dir}/migrations`)).toBe(hasMigrations);
    }
  });

  it('gives the migrate target the kit, migrate.js and every migrations folder', () => {
    const s = stage('migrate');
    expect(of(s, 'CMD').map((i) => execForm(i.args))).toEqual([['node', 'deploy/docker/migrate.js']]);
    expect(fs.existsSync(path.join(REPO, 'deploy/docker/migrate.js'))).toBe(true);
    const fromBuild = copiedFrom(s, 'build');
    expect(fromBuild).toEqual(expect.arrayContaining(['services/kit/dist', 'proto/dist']));
    const migrations = fromBuild.filter((p) => p.endsWith('/migrations')).sort();
    expect(migrations).toEqual(servicesWithMigrations().map((m) => `services/${m.name}/migrations`));
    expect(of(stage('deps-migrate'), 'RUN')[0]?.args).toMatch(/--workspace=services\/kit( |$)/);
  });

  it('runs every target as uid 10001, without npm, from the runtime stage', () => {
    const runtime = stage('runtime');
    expect(runtime.from).toBe('${NODE_IMAGE}');
    expect(of(runtime, 'USER').map((i) => i.args)).toEqual(['10001:10001']);
    expect(of(runtime, 'RUN')[0]?.args).toMatch(/rm -rf .*\/usr\/local\/lib\/node_modules\/npm/);
    expect(of(runtime, 'RUN')[0]?.args).toMatch(/useradd --system --uid 10001 --gid 10001/);
    expect(stage('base').from).toBe('runtime');
    expect(of(stage('base'), 'USER')).toEqual([]);
    for (const target of [...Object.keys(deployables), 'migrate']) {
      const s = stage(target);
      expect(s.from).toBe('base');
      const users = of(s, 'USER').map((i) => i.args);
      if (users.length > 0) expect(users[users.length - 1]).toBe('10001:10001');
    }
  });

  it('installs ffmpeg and pocketsphinx in the transcription image alone (the compiler in the native stage alone)', () => {
    const apt = of(stage('transcription'), 'RUN').map((i) => i.args).find((a) => a.includes('apt-get install'));
    expect(apt).toMatch(/apt-get install -y --no-install-recommends\s+ffmpeg pocketsphinx pocketsphinx-en-us/);
    expect(apt).toMatch(/rm -rf \/var\/lib\/apt\/lists/);
    for (const s of dockerfile.stages.filter((x) => x.name !== 'transcription' && x.name !== 'native')) {
      expect(of(s, 'RUN').some((i) => i.args.includes('apt-get'))).toBe(false);
    }
  });

  it('builds the live recognizer in its own stage with build-native.js and gives the transcription image the binary alone', () => {
    const native = stage('native');
    const runs = of(native, 'RUN').map((i) => i.args);
    expect(runs[0]).toMatch(/apt-get install -y --no-install-recommends\s+gcc libc6-dev pkg-config libpocketsphinx-dev libsphinxbase-dev/);
    // The script that builds it on a developer's machine; it exits 0 without headers, so the stage checks the binary.
    expect(runs[1]).toBe('node scripts/build-native.js && test -x services/transcription/native/build/ps-live');
    const fromContext = of(native, 'COPY').map((i) => i.args.split(/\s+/)[0]);
    expect(fromContext).toEqual(['scripts/build-native.js', 'services/transcription/native/ps-live.c']);
    expect(copiedFrom(stage('transcription'), 'native')).toEqual(['services/transcription/native/build/ps-live']);
    for (const target of [...Object.keys(deployables), 'migrate'].filter((t) => t !== 'transcription')) expect(copiedFrom(stage(target), 'native')).toEqual([]);
    // The binary the service looks for (LIVE_BINARY) is where the image puts it, and no host build enters the context.
    const copy = of(stage('transcription'), 'COPY').find((i) => i.flags.from === 'native');
    expect(copy?.args.split(/\s+/)[1]).toBe('services/transcription/native/build/ps-live');
    expect(ignored('services/transcription/native/build/ps-live')).toBe(true);
    expect(ignored('services/transcription/native/ps-live.c')).toBe(false);
  });

  it('installs exactly what the committed lock pins', () => {
    const installs = dockerfile.stages.flatMap((s) => of(s, 'RUN').map((i) => ({ stage: s.name, args: i.args }))).filter((i) => /npm install(?! --global)/.test(i.args));
    expect(installs.map((i) => i.stage).sort()).toEqual(['build', 'deps-migrate', ...Object.keys(deployables).map((t) => `deps-${t}`)].sort());
    for (const i of installs) {
      expect(i.args).toContain('--ignore-scripts');
      // The full install must leave the lock as committed; a production install, whose lock
      // loses the devDependencies, must install only packages the committed lock pins.
      if (i.stage === 'build') expect(i.args).toContain('cmp package-lock.json /tmp/package-lock.committed');
      else expect(i.args).toMatch(/^npm pkg delete devDependencies --workspaces && npm install .*&& node \/tmp\/lock-subset\.js \/tmp\/package-lock\.committed package-lock\.json/);
    }
    // npm of the same major as the one that writes the lock here (npm 10 rewrites npm 11's).
    const pinned = of(stage('manifests'), 'ARG').map((i) => i.args).find((a) => a.startsWith('NPM_VERSION='));
    const local = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
    expect(pinned?.split('=')[1]?.split('.')[0]).toBe(local.split('.')[0]);
  });

  it('writes what every deployable shares once, in the base stage', () => {
    const shared = copiedFrom(stage('base'), 'build');
    expect(shared).toEqual(['proto/package.json', 'proto/dist', 'proto/murmur', 'proto/google', 'services/contract/package.json', 'services/contract/dist', 'services/kit/package.json', 'services/kit/dist']);
    for (const target of [...Object.keys(deployables), 'migrate']) {
      const own = of(stage(target), 'COPY').map((i) => (i.args.split(/\s+/)[0] ?? '').replace(/^\/app\//, ''));
      expect([target, own.filter((p) => shared.includes(p))]).toEqual([target, []]);
    }
  });

  it('copies every workspace manifest before installing (the lock names them all)', () => {
    const manifests = of(stage('manifests'), 'COPY').map((i) => i.args.split(/\s+/)[0]);
    for (const w of workspaces) expect(manifests).toContain(`${w.dir}/package.json`);
  });

  it('sends the build context every file it copies, and no node_modules, dist or .git', () => {
    const fromContext = dockerfile.stages.flatMap((s) => of(s, 'COPY')).filter((i) => !i.flags.from);
    expect(fromContext.length).toBeGreaterThan(10);
    for (const i of fromContext) {
      const sources = i.args.split(/\s+/).slice(0, -1);
      for (const src of sources) {
        expect([src, fs.existsSync(path.join(REPO, src))]).toEqual([src, true]);
        expect([src, ignored(src)]).toEqual([src, false]);
      }
    }
    for (const p of ['node_modules/x', 'services/kit/node_modules/x', 'gateway/dist/main.js', '.git/HEAD', 'data/auth', 'services/auth/test/a.test.ts', 'deploy/helm/check.js']) {
      expect([p, ignored(p)]).toEqual([p, true]);
    }
  });
});
