/** The shared renderers: Markdown tables and escaping, plain text, one shape per kind. */
import type { Artifact } from '../src/artifacts';
import { escapeMarkdown, markdownTable, renderArtifact } from '../src/render';
import { parseMarkdownTable } from './support/markdown';

describe('markdownTable', () => {
  it('writes a header, a separator and one line per row, each with the header\'s cells', () => {
    const md = markdownTable(['Owner', 'Task', 'Due'], [['Dana', 'Send mocks', '2026-01-16'], ['Team', 'Decide', '']]);
    expect(md).toBe('| Owner | Task | Due |\n| --- | --- | --- |\n| Dana | Send mocks | 2026-01-16 |\n| Team | Decide |  |');
  });

  it('escapes pipes, flattens line breaks and pads or cuts rows to the header', () => {
    const md = markdownTable(['A', 'B'], [['x | y', 'one\ntwo'], ['only'], ['1', '2', '3']]);
    expect(parseMarkdownTable(md)).toEqual({ header: ['A', 'B'], rows: [['x | y', 'one two'], ['only', ''], ['1', '2']] });
  });
});

describe('escapeMarkdown', () => {
  it.each([
    ['emphasis and code', 'a *b* _c_ `d`', 'a \\*b\\* \\_c\\_ \\`d\\`'],
    ['links and html', '[x](y) <b>', '\\[x\\](y) \\<b\\>'],
    ['a leading heading mark', '# not a heading', '\\# not a heading'],
    ['a leading list number', '2. not a list', '2\\. not a list'],
    ['ordinary punctuation', 'Q4: 81% of teams, e.g. 1:1s.', 'Q4: 81% of teams, e.g. 1:1s.'],
  ])('escapes %s', (_name, text, expected) => {
    expect(escapeMarkdown(text)).toBe(expected);
  });
});

describe('renderArtifact', () => {
  const items = [
    { owner: 'Dana', task: 'Send the *final* mocks', due: '2026-01-16' },
    { owner: 'Team', task: 'Decide who is on call', due: '' },
  ];
  const cases: [string, Artifact, string, string][] = [
    [
      'a summary as paragraphs',
      { kind: 'summary', title: 'Summary', sentences: ['One.', 'Two.'], bullets: false },
      '## Summary\n\nOne. Two.\n',
      'Summary\n\nOne. Two.\n',
    ],
    [
      'a summary as bullets',
      { kind: 'summary', title: 'Summary', sentences: ['One.', 'Two.'], bullets: true },
      '## Summary\n\n- One.\n- Two.\n',
      'Summary\n\n- One.\n- Two.\n',
    ],
    [
      'action items with weekdays on due dates',
      { kind: 'action_items', items },
      '## Action items\n\n- [ ] **Dana**: Send the \\*final\\* mocks (due Fri 2026-01-16)\n- [ ] **Team**: Decide who is on call\n',
      'Action items\n\n- Dana: Send the *final* mocks (due Fri 2026-01-16)\n- Team: Decide who is on call\n',
    ],
    [
      'no action items',
      { kind: 'action_items', items: [] },
      '## Action items\n\nNo action items were found in this transcript.\n',
      'Action items\n\nNo action items were found in this transcript.\n',
    ],
    [
      'a spreadsheet (CSV in plain)',
      { kind: 'spreadsheet', title: 'Action items', columns: ['Owner', 'Task', 'Due'], rows: items.map((i) => [i.owner, i.task, i.due]) },
      '## Action items\n\n| Owner | Task | Due |\n| --- | --- | --- |\n| Dana | Send the \\*final\\* mocks | 2026-01-16 |\n| Team | Decide who is on call |  |\n',
      'Owner,Task,Due\r\nDana,Send the *final* mocks,2026-01-16\r\nTeam,Decide who is on call,\r\n',
    ],
  ];

  it.each(cases)('writes %s', (_name, artifact, markdown, plain) => {
    expect(renderArtifact(artifact, 'markdown')).toBe(markdown);
    expect(renderArtifact(artifact, 'plain')).toBe(plain);
  });

  it('writes an email with subject, greeting, points, next steps and a sign-off on two lines', () => {
    const email: Artifact = {
      kind: 'email', subject: 'Recap: launch', greeting: 'Hi all,', opening: 'Here is a short recap.', keyPoints: ['We ship on the 27th.'],
      actionItems: items, closing: 'Let me know.', signOff: 'Best,', signature: '[Your name]',
    };
    expect(renderArtifact(email, 'plain')).toBe(
      'Subject: Recap: launch\n\nHi all,\n\nHere is a short recap.\n\nKey points:\n- We ship on the 27th.\n\nNext steps:\n' +
        '- Dana: Send the *final* mocks (due Fri 2026-01-16)\n- Team: Decide who is on call\n\nLet me know.\n\nBest,\n[Your name]\n',
    );
    expect(renderArtifact(email, 'markdown')).toContain('**Subject:** Recap: launch\n\nHi all,\n\n');
    expect(renderArtifact(email, 'markdown')).toContain('**Next steps**\n\n- **Dana**: Send the \\*final\\* mocks (due Fri 2026-01-16)\n');
    expect(renderArtifact(email, 'markdown')).toMatch(/Best,  \n\[Your name\]\n$/);
  });

  it('writes meeting notes with attendees, people mentioned and empty sections said plainly', () => {
    const notes: Artifact = {
      kind: 'meeting_notes', title: 'Meeting notes: launch', date: '2026-01-13', attendees: ['Priya', 'Marco'], peopleMentioned: ['Lena'],
      discussion: ['The beta has 412 teams.'], decisions: [], actionItems: [],
    };
    expect(renderArtifact(notes, 'markdown')).toBe(
      '## Meeting notes: launch\n\n- **Date:** Tue 2026-01-13\n- **Attendees:** Priya, Marco\n- **Also mentioned:** Lena\n\n' +
        '### Discussion\n\n- The beta has 412 teams.\n\n### Decisions\n\nNo decisions were recorded.\n\n### Action items\n\nNo action items were found in this transcript.\n',
    );
    expect(renderArtifact({ ...notes, attendees: [] }, 'plain')).toContain('Date: Tue 2026-01-13\nPeople mentioned: Lena\n\nDiscussion\n- The beta has 412 teams.');
  });
});
