/**
 * Issue #17's stand-up, as a new user tries it: one "Action items:" sentence that lists three
 * people's tasks. Every kind that lists items gives the three, each with its own owner and due
 * date (recorded Monday 23 November 2026: "by Thursday" is the 26th, "today" the 23rd,
 * "tomorrow" the 24th); the spreadsheet is three rows (CSV under plain); the summary keeps the
 * build problem and names what happens next.
 */
import { artifactData, columnKeys, extractArtifact, parseCsv, renderArtifact, type ActionItemsArtifact, type KindName } from '../src/index';
import { parseMarkdownTable } from './support/markdown';

const STAND_UP =
  'Quick stand-up. The mobile build failed again last night because of the signing certificate. ' +
  'Action items: Maria finishes legal review by Thursday, Tom re-runs the mobile build today, ' +
  'and I will send the updated timeline to the leadership team tomorrow.';
const RECORDED = new Date('2026-11-23T09:30:00Z');
const ITEMS = [
  { owner: 'Maria', task: 'Finish legal review', due: '2026-11-26' },
  { owner: 'Tom', task: 'Re-run the mobile build', due: '2026-11-23' },
  { owner: 'Speaker', task: 'Send the updated timeline to the leadership team', due: '2026-11-24' },
];

const rendered = (kind: KindName, format: 'markdown' | 'plain') => renderArtifact(extractArtifact(STAND_UP, kind, '', RECORDED), format);

describe('the stand-up of issue #17', () => {
  it('finds three items, each owned and dated', () => {
    expect((extractArtifact(STAND_UP, 'action_items', '', RECORDED) as ActionItemsArtifact).items).toEqual(ITEMS);
  });

  it.each(['action_items', 'meeting_notes', 'email'] as const)('lists the three in %s, in both formats', (kind) => {
    for (const format of ['markdown', 'plain'] as const) {
      const text = rendered(kind, format).replace(/\*\*/g, '');
      for (const item of ITEMS) expect(text).toMatch(new RegExp(`${item.owner}: ${item.task} \\(due \\w{3} ${item.due}\\)`));
    }
  });

  it('is a spreadsheet of three rows, and a CSV of three rows under plain', () => {
    const table = parseMarkdownTable(rendered('spreadsheet', 'markdown'));
    expect(table.rows).toHaveLength(3);
    const csv = parseCsv(rendered('spreadsheet', 'plain'));
    expect(csv).toHaveLength(4);
    expect(csv.slice(1).map((row) => [row[0], row[1], row[2]])).toEqual(ITEMS.map((i) => [i.owner, i.task, i.due]));
  });

  it('summarises the build problem and names the three next steps', () => {
    const summary = rendered('summary', 'plain');
    expect(summary).toContain('The mobile build failed again last night because of the signing certificate.');
    const next = summary.split('Next steps:\n')[1]!.trim().split('\n');
    expect(next).toEqual(ITEMS.map((i) => expect.stringContaining(`${i.owner}: ${i.task}`)));
  });

  it('is the same as data in every kind: items, rows keyed by column, next steps, an email of subject and body', () => {
    const data = (kind: KindName) => artifactData(extractArtifact(STAND_UP, kind, '', RECORDED)) as Record<string, any>;
    const asData = ITEMS.map((i) => ({ task: i.task, owner: i.owner, due: i.due }));
    expect(data('action_items')).toEqual({ items: asData });
    expect(data('spreadsheet').rows).toEqual(ITEMS.map((i) => ({ owner: i.owner, task: i.task, due: i.due })));
    expect(data('summary')).toMatchObject({ title: 'Summary', next_steps: asData });
    expect(data('meeting_notes')).toMatchObject({ date: '2026-11-23', action_items: asData });
    const email = data('email');
    expect(email.subject).toEqual(expect.any(String));
    expect(email.body).not.toMatch(/^Subject:/);
    for (const i of ITEMS) expect(email.body).toContain(`${i.owner}: ${i.task}`);
  });

  it('keys spreadsheet rows by column name, apart when names repeat', () => {
    expect(columnKeys(['Owner', 'Due date', 'Task', 'Due date', '—'])).toEqual(['owner', 'due_date', 'task', 'due_date_2', 'column_5']);
  });

  it('splits a listed body only where every part names its owner', () => {
    const items = (text: string) => (extractArtifact(text, 'action_items', '', RECORDED) as ActionItemsArtifact).items;
    // "and" inside one task is not a new item.
    expect(items('Action items: Priya reviews the budget and the hiring plan by Friday, and Sam books the venue.')).toEqual([
      { owner: 'Priya', task: 'Review the budget and the hiring plan', due: '2026-11-27' },
      { owner: 'Sam', task: 'Book the venue', due: '' },
    ]);
    expect(items('Action items: Jonas to draft the FAQ; Lea will test the export tomorrow.')).toEqual([
      { owner: 'Jonas', task: 'Draft the FAQ', due: '' },
      { owner: 'Lea', task: 'Test the export', due: '2026-11-24' },
    ]);
  });
});
