/**
 * The documentation stays navigable: every relative link in the repository's Markdown (README.md,
 * docs/, the packages' READMEs) reaches a file in the repository, and a `#anchor` into a Markdown
 * file reaches one of its headings (GitHub's slugs); the decision index lists every record and
 * nothing else; and every npm script the README and docs/ name exists.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const DECISIONS = path.join(ROOT, 'docs', 'decisions');
/** Folders that hold no documentation of ours. */
const SKIP_DIRS = new Set(['node_modules', 'dist', 'data', 'models', 'coverage']);

/** Every Markdown file of the repository, relative to its root. */
function markdownFiles(dir = ROOT): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(full));
    else if (entry.isFile() && entry.name.endsWith('.md')) found.push(path.relative(ROOT, full));
  }
  return found.sort();
}

/** The text outside fenced code blocks, line by line (code lines become empty). */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opener = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      return '';
    }
    if (opener) {
      fence = opener;
      return '';
    }
    return line;
  });
}

/** A line without its inline code spans (their text is never a link). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)(?:(?!\1).)+?\1/g, 'code');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors a Markdown file offers: its headings' slugs (repeats numbered as GitHub does) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = headingSlug(heading);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

/** The inline links and images of a Markdown file, outside code. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  proseLines(markdown).forEach((raw, i) => {
    const line = withoutCodeSpans(raw);
    for (const m of line.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1]! });
    const reference = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (reference) links.push({ line: i + 1, target: reference[1]! });
  });
  return links;
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** What is wrong with each relative link of `file` (empty when every one resolves). */
export function brokenLinks(file: string, markdown = read(file)): string[] {
  const problems: string[] = [];
  for (const { line, target } of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …: not ours to check
    const where = `${file}:${line}: ${target}`;
    const hash = target.indexOf('#');
    const pathPart = decodeURI(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved = pathPart === '' ? path.join(ROOT, file) : path.resolve(ROOT, path.dirname(file), pathPart);
    if (path.relative(ROOT, resolved).startsWith('..') || path.isAbsolute(pathPart)) {
      problems.push(`${where}: points outside the repository`);
      continue;
    }
    let isFile: boolean;
    try {
      isFile = statSync(resolved).isFile();
    } catch {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined || !resolved.endsWith('.md')) continue;
    if (!isFile) {
      problems.push(`${where}: an anchor into a folder`);
      continue;
    }
    const anchors = anchorsOf(pathPart === '' ? markdown : readFileSync(resolved, 'utf8'));
    if (!anchors.has(anchor)) problems.push(`${where}: no heading "#${anchor}" there`);
  }
  return problems;
}

/** A decision record's file name: NNNN-short-slug.md. */
const RECORD = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;

interface IndexRow {
  file: string;
  title: string;
  date: string;
}

/** The rows of the decision index's table: `| [NNNN](file) | title | date | summary |`. */
function indexRows(markdown: string): IndexRow[] {
  const rows: IndexRow[] = [];
  for (const line of markdown.split('\n')) {
    const m = /^\|\s*\[(\d{4})\]\(([^)]+)\)\s*\|\s*(.*?)\s*\|\s*(\S+)\s*\|/.exec(line);
    if (m) rows.push({ file: m[2]!, title: m[3]!, date: m[4]! });
  }
  return rows;
}

/** A record's title and date: its first line `# Title`, then `Date: YYYY-MM-DD · Status: …`. */
function recordHeader(markdown: string): { title?: string; date?: string; status?: string } {
  const lines = markdown.split('\n');
  const title = /^# (.+)$/.exec(lines[0] ?? '')?.[1];
  const dated = markdown.match(/^Date: (\d{4}-\d{2}-\d{2}) · Status: (.+)$/m);
  return { title, date: dated?.[1], status: dated?.[2] };
}

/** `npm start`, `npm test` and every `npm run X` a text names. */
function npmScriptsNamed(markdown: string): string[] {
  const names = new Set<string>();
  for (const m of markdown.matchAll(/\bnpm (start|test)\b/g)) names.add(m[1]!);
  for (const m of markdown.matchAll(/\bnpm run ([a-z][\w:.-]*[\w])/g)) names.add(m[1]!);
  return [...names].sort();
}

describe('the documentation', () => {
  const files = markdownFiles();

  it('finds the README, docs/ and the packages\' READMEs', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/decisions/README.md', 'docs/configuration.md', 'services/auth/README.md', 'bench/README.md']));
  });

  it.each(files)('%s: every relative link reaches a file of the repository, and every anchor a heading', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  describe('the decision records', () => {
    const records = readdirSync(DECISIONS).filter((f) => f !== 'README.md');
    const index = read('docs/decisions/README.md');

    it('are all named NNNN-short-slug.md and numbered 0001 upwards without a gap', () => {
      expect(records.filter((f) => !RECORD.test(f))).toEqual([]);
      expect(records.map((f) => Number(f.slice(0, 4))).sort((a, b) => a - b)).toEqual(records.map((_, i) => i + 1));
    });

    it('each open with a title and a "Date: YYYY-MM-DD · Status: …" line', () => {
      const bad = records.filter((f) => {
        const h = recordHeader(read(`docs/decisions/${f}`));
        return !h.title || !h.date || !h.status;
      });
      expect(bad).toEqual([]);
    });

    it('are listed in the index, every one, and nothing else, with their own title and date', () => {
      const rows = indexRows(index);
      expect(rows.map((r) => r.file).sort()).toEqual([...records].sort());
      for (const row of rows) {
        const h = recordHeader(read(`docs/decisions/${row.file}`));
        expect({ file: row.file, title: row.title, date: row.date }).toEqual({ file: row.file, title: h.title, date: h.date });
      }
    });
  });

  it('names only npm scripts that package.json has (README.md and docs/*.md)', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const named = files.filter((f) => f === 'README.md' || /^docs\/[^/]+\.md$/.test(f)).flatMap((f) => npmScriptsNamed(read(f)).map((s) => `${f}: ${s}`));
    expect(named.filter((n) => !scripts.includes(n.split(': ')[1]!))).toEqual([]);
    expect(named).toEqual(expect.arrayContaining(['README.md: start', 'README.md: test']));
  });
});

describe('the link checker itself', () => {
  it('slugs headings as GitHub does', () => {
    expect(headingSlug('Engines (`MURMUR_CONVERSION_ENGINE`)')).toBe('engines-murmur_conversion_engine');
    expect(headingSlug("OAuth for MCP clients: the SDK's helpers")).toBe('oauth-for-mcp-clients-the-sdks-helpers');
    expect(headingSlug('One contract package (issue 31, items 1–3)')).toBe('one-contract-package-issue-31-items-13');
    expect(headingSlug('Under `npm start`')).toBe('under-npm-start');
  });

  it('finds links outside code only', () => {
    const md = 'See [a](a.md) and `[b](b.md)`.\n```\n[c](c.md)\n```\n![d](d.png) [e](https://x.test) [`f`](f.md#g)\n';
    expect(linksOf(md).map((l) => l.target)).toEqual(['a.md', 'd.png', 'https://x.test', 'f.md#g']);
  });

  it('reports a missing file, a missing heading and a link out of the repository', () => {
    const md = '[gone](docs/no-such-file.md) [anchor](docs/configuration.md#no-such-heading) [out](../shared/DESIGN.md) [ok](docs/configuration.md#tracing) [self](#here)\n\n## Here\n';
    expect(brokenLinks('README.md', md)).toEqual([
      'README.md:1: docs/no-such-file.md: no such file',
      'README.md:1: docs/configuration.md#no-such-heading: no heading "#no-such-heading" there',
      'README.md:1: ../shared/DESIGN.md: points outside the repository',
    ]);
  });
});
