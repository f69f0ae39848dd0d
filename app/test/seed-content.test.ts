import { buildSeedPlan, type SeedPlan, type SeedRecording } from '../src/seed/seed-content';

/** The documented upper bound on `recordings`. */
const MAX_SEED_RECORDINGS = 10_000;

const NOW = new Date('2025-06-15T12:00:00Z');
const DAY = 86_400_000;

const plans = new Map<string, SeedPlan>();
/** Plans are pure, so each (size, seed, now) is built once and shared by the tests that read it. */
function plan(recordings: number, seed = 1, now = NOW): SeedPlan {
  const id = `${recordings}/${seed}/${now.toISOString()}`;
  let p = plans.get(id);
  if (!p) plans.set(id, (p = buildSeedPlan({ recordings, now, seed })));
  return p;
}

const sentencesOf = (text: string) => text.split(/(?<=[.?!])\s+/);
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const artifact = (r: SeedRecording, kind: SeedRecording['artifacts'][number]['kind']) => r.artifacts.find((a) => a.kind === kind);

describe('buildSeedPlan', () => {
  it.each([-1, 1.5, MAX_SEED_RECORDINGS + 1, Number.NaN])('rejects %p recordings', (recordings) => {
    expect(() => buildSeedPlan({ recordings, now: NOW })).toThrow(RangeError);
  });

  it('rejects an invalid now', () => {
    expect(() => buildSeedPlan({ recordings: 1, now: new Date('nope') })).toThrow(RangeError);
  });

  describe('determinism', () => {
    it('gives a deep-equal plan for the same seed and now', () => {
      expect(buildSeedPlan({ recordings: 50, now: NOW, seed: 42 })).toEqual(buildSeedPlan({ recordings: 50, now: NOW, seed: 42 }));
    });

    it('uses a fixed default seed', () => {
      expect(buildSeedPlan({ recordings: 20, now: NOW })).toEqual(buildSeedPlan({ recordings: 20, now: NOW }));
    });

    it.each([[1, 2], [42, 43], [0, 7]])('gives different content for seeds %i and %i', (a, b) => {
      const pa = plan(50, a);
      const pb = plan(50, b);
      expect(pa).not.toEqual(pb);
      expect(pa.recordings.map((r) => r.text)).not.toEqual(pb.recordings.map((r) => r.text));
    });
  });

  describe.each([0, 1, 3, 50, 1000])('with %i recordings', (n) => {
    const p = () => plan(n);

    it('creates the requested recordings, 4–6 folders, and KBs and threads only when there is enough to gather', () => {
      const { folders, knowledgeBases, recordings, threads } = p();
      expect(recordings).toHaveLength(n);
      expect(folders.length).toBeGreaterThanOrEqual(4);
      expect(folders.length).toBeLessThanOrEqual(6);
      expect(folders.map((f) => f.name).slice(0, 4)).toEqual(['Work', 'Customer calls', 'Ideas', 'Personal']);
      if (n < 3) {
        expect(knowledgeBases).toHaveLength(0);
        expect(threads).toHaveLength(0);
        return;
      }
      expect(knowledgeBases.length).toBeGreaterThanOrEqual(2);
      expect(knowledgeBases.length).toBeLessThanOrEqual(3);
      for (const kb of knowledgeBases) {
        expect(kb.recordingKeys.length).toBeGreaterThanOrEqual(3);
        expect(kb.recordingKeys.length).toBeLessThanOrEqual(15);
        expect(kb.description.length).toBeGreaterThan(20);
      }
      expect(threads).toHaveLength(Math.max(2, Math.round(n / 5)));
    });

    it('gives every folder, KB, recording and thread a unique key', () => {
      const { folders, knowledgeBases, recordings, threads } = p();
      const keys = [...folders, ...knowledgeBases, ...recordings, ...threads].map((x) => x.key);
      expect(new Set(keys).size).toBe(keys.length);
    });

    it('resolves every reference to an existing entity of the right kind', () => {
      const { folders, knowledgeBases, recordings, threads } = p();
      const byKind = {
        folder: new Set(folders.map((f) => f.key)),
        knowledge_base: new Set(knowledgeBases.map((k) => k.key)),
        recording: new Set(recordings.map((r) => r.key)),
      };
      for (const r of recordings) if (r.folderKey !== null) expect(byKind.folder).toContain(r.folderKey);
      for (const kb of knowledgeBases) {
        expect(new Set(kb.recordingKeys).size).toBe(kb.recordingKeys.length);
        for (const key of kb.recordingKeys) expect(byKind.recording).toContain(key);
      }
      for (const t of threads) {
        for (const item of t.items) {
          if (item.kind === 'recording') expect(byKind.recording).toContain(item.recordingKey);
          else expect(item.recordingKey).toBeNull();
        }
        for (const s of t.contextSources) expect(byKind[s.kind]).toContain(s.refKey);
      }
    });

    it('orders timestamps, keeps them within ~90 days before now, and creates containers before their contents', () => {
      const { folders, knowledgeBases, recordings, threads } = p();
      const all = [...folders, ...knowledgeBases, ...recordings, ...threads].map((x) => x.createdAt.getTime());
      for (const t of all) {
        expect(t).toBeLessThan(NOW.getTime());
        expect(t).toBeGreaterThan(NOW.getTime() - 100 * DAY);
      }
      for (const list of [folders, knowledgeBases, recordings, threads]) {
        const times = list.map((x) => x.createdAt.getTime());
        expect(times).toEqual([...times].sort((a, b) => a - b));
      }
      const at = new Map(recordings.map((r) => [r.key, r.createdAt.getTime()]));
      const folderAt = new Map(folders.map((f) => [f.key, f.createdAt.getTime()]));
      for (const r of recordings) if (r.folderKey !== null) expect(folderAt.get(r.folderKey)).toBeLessThan(r.createdAt.getTime());
      for (const kb of knowledgeBases) for (const k of kb.recordingKeys) expect(kb.createdAt.getTime()).toBeLessThan(at.get(k)!);
      for (const t of threads) {
        for (const item of t.items) if (item.recordingKey) expect(t.createdAt.getTime()).toBeGreaterThan(at.get(item.recordingKey)!);
      }
    });

    it('times segments contiguously from 0 to the duration at a speaking pace, and joins them into the text', () => {
      for (const r of p().recordings) {
        expect(r.language).toBe('en');
        expect(r.segments[0]?.startSeconds).toBe(0);
        r.segments.forEach((s, i) => {
          expect(s.endSeconds).toBeGreaterThan(s.startSeconds);
          if (i > 0) expect(s.startSeconds).toBe(r.segments[i - 1]!.endSeconds);
          expect(s.text).toBe(s.text.trim());
        });
        expect(r.segments[r.segments.length - 1]?.endSeconds).toBe(r.durationSeconds);
        expect(r.text).toBe(r.segments.map((s) => s.text).join(' '));
        const pace = words(r.text) / r.durationSeconds;
        expect(pace).toBeGreaterThan(1.8);
        expect(pace).toBeLessThan(3.2);
      }
    });

    it('writes transcripts of 3–25 sentences with every template slot filled', () => {
      for (const r of p().recordings) {
        const count = sentencesOf(r.text).length;
        expect(count).toBeGreaterThanOrEqual(3);
        expect(count).toBeLessThanOrEqual(25);
        for (const s of [r.title, r.text, ...r.artifacts.map((a) => a.content)]) expect(s).not.toMatch(/[{}]|undefined/);
      }
      for (const t of p().threads) for (const s of [t.title, ...t.items.map((i) => i.text)]) expect(s).not.toMatch(/[{}]|undefined/);
    });

    it('builds threads of 3–8 items with notes, recordings, a question and an answer citing those recordings', () => {
      for (const t of p().threads) {
        expect(t.items.length).toBeGreaterThanOrEqual(3);
        expect(t.items.length).toBeLessThanOrEqual(8);
        const kinds = t.items.map((i) => i.kind);
        for (const kind of ['note', 'recording', 'question', 'answer'] as const) expect(kinds).toContain(kind);
        expect(kinds.indexOf('answer')).toBe(kinds.indexOf('question') + 1);
        const answer = t.items.find((i) => i.kind === 'answer')!.text;
        for (const item of t.items.filter((i) => i.kind === 'recording')) expect(answer).toContain(`"${item.text}"`);
        expect(t.contextSources.length).toBeGreaterThanOrEqual(1);
        expect(t.contextSources.length).toBeLessThanOrEqual(4);
        const refs = t.contextSources.map((s) => `${s.kind}:${s.refKey}`);
        expect(new Set(refs).size).toBe(refs.length);
      }
    });

    it('derives every artifact from its own transcript', () => {
      for (const r of p().recordings) {
        if (r.artifacts.length === 0) continue;
        const text = r.text.toLowerCase();
        expect(r.artifacts[0]).toMatchObject({ kind: 'summary', format: 'markdown' });
        const [heading, blank, ...bullets] = artifact(r, 'summary')!.content.trimEnd().split('\n');
        expect(heading).toBe(`## ${r.title}`);
        expect(blank).toBe('');
        expect(bullets.length).toBeGreaterThanOrEqual(2);
        expect(bullets.length).toBeLessThanOrEqual(4);
        for (const b of bullets) expect(r.text).toContain(b.replace(/^- /, ''));

        const email = artifact(r, 'email');
        if (email) {
          expect(email.format).toBe('plain');
          expect(email.content).toMatch(/^Subject: Recap: .+\n\nHi [^\n]+,\n\n[\s\S]+\n\nBest,\n\[Your name\]\n$/);
          for (const line of email.content.split('\n').filter((l) => l.startsWith('- '))) expect(r.text).toContain(line.slice(2));
        }

        const actions = artifact(r, 'action_items');
        if (actions) {
          const lines = actions.content.trimEnd().split('\n').slice(2);
          expect(lines.length).toBeGreaterThan(0);
          for (const line of lines) {
            const m = /^- \[ \] \*\*(.+?)\*\*: (.+) \(due (.+)\)$/.exec(line);
            expect(m).not.toBeNull();
            expect(text).toContain(m![2]!.toLowerCase());
            expect(m![2]!.split(/\W+/)).not.toContain(m![1]);
          }
        }
      }
    });

    it('writes spreadsheets as well-formed Markdown tables whose rows the transcript states', () => {
      for (const r of p().recordings) {
        const sheet = artifact(r, 'spreadsheet');
        if (!sheet) continue;
        expect(sheet.format).toBe('markdown');
        const [header, rule, ...rows] = sheet.content.trimEnd().split('\n');
        expect(header).toBe('| Owner | Task | Due |');
        expect(rule).toBe('| --- | --- | --- |');
        expect(rows.length).toBeGreaterThanOrEqual(2);
        for (const row of rows) {
          const m = /^\| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/.exec(row);
          expect(m).not.toBeNull();
          const [, owner, task, due] = m!;
          expect(owner === 'Me' || r.text.includes(owner!)).toBe(true);
          expect(r.text.toLowerCase()).toContain(task!.toLowerCase());
          expect(task!.split(/\W+/)).not.toContain(owner);
          expect(due!.trim()).toBe(due);
        }
      }
    });
  });

  describe('a realistic library', () => {
    const big = () => plan(1000);

    it('keeps at least 90% of transcripts distinct at 200 recordings', () => {
      const texts = plan(200).recordings.map((r) => r.text);
      expect(new Set(texts).size / texts.length).toBeGreaterThanOrEqual(0.9);
    });

    it.each([
      ['stand-ups', /stand-up/i], ['1:1s', /1:1/], ['customer calls', /call|check-in/i], ['product ideas', /idea|thought/i],
      ['errands', /errand|grocer|shopping|to-do/i], ['book notes', /notes on|reading notes|chapter/i],
      ['interview debriefs', /debrief|interview/i], ['planning sessions', /planning/i],
    ])('includes %s', (_, title) => {
      expect(big().recordings.filter((r) => title.test(r.title)).length).toBeGreaterThan(10);
    });

    it('names people and states action items with due dates', () => {
      const text = big().recordings.map((r) => r.text).join(' ');
      for (const name of ['Priya', 'Marcus', 'Elena', 'Tom']) expect(text).toContain(name);
      expect(text).toMatch(/\b[A-Z][a-z]+ will [a-z].+? by (Monday|Tuesday|Wednesday|Thursday|Friday|next Friday)\./);
    });

    it('files most recordings in folders and leaves some unfiled', () => {
      const unfiled = big().recordings.filter((r) => r.folderKey === null).length;
      expect(unfiled).toBeGreaterThan(0);
      expect(unfiled / 1000).toBeLessThan(0.25);
    });

    it('puts artifacts on about 60% of recordings, in every kind', () => {
      const withArtifacts = big().recordings.filter((r) => r.artifacts.length > 0).length;
      expect(withArtifacts / 1000).toBeGreaterThan(0.5);
      expect(withArtifacts / 1000).toBeLessThan(0.7);
      const kinds = new Set(big().recordings.flatMap((r) => r.artifacts.map((a) => a.kind)));
      expect([...kinds].sort()).toEqual(['action_items', 'email', 'spreadsheet', 'summary']);
    });

    it('references folders, knowledge bases and recordings as thread context', () => {
      const kinds = new Set(big().threads.flatMap((t) => t.contextSources.map((s) => s.kind)));
      expect([...kinds].sort()).toEqual(['folder', 'knowledge_base', 'recording']);
    });

    it.each([
      ['just after midnight', new Date('2025-06-16T00:00:30Z')],
      ['on a Sunday evening', new Date('2025-06-15T23:59:59Z')],
      ['with milliseconds', new Date('2024-02-29T08:00:00.123Z')],
    ])('stays strictly before now %s', (_, now) => {
      const p = plan(500, 3, now);
      const times = [...p.folders, ...p.knowledgeBases, ...p.recordings, ...p.threads].map((x) => x.createdAt.getTime());
      expect(Math.max(...times)).toBeLessThan(now.getTime());
    });

    it('generates the largest plan allowed', () => {
      const p = buildSeedPlan({ recordings: MAX_SEED_RECORDINGS, now: NOW, seed: 9 });
      expect(p.recordings).toHaveLength(MAX_SEED_RECORDINGS);
      expect(p.threads).toHaveLength(MAX_SEED_RECORDINGS / 5);
    });
  });
});
