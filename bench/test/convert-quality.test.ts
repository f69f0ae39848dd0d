/**
 * bench/convert-quality's reading of the evaluation set and its scores, on a small set made
 * here in the sources' formats (QMSum JSON, AMI abssumm XML): the loader, the parse of AMI's
 * action sentences, the recall / owner / noise arithmetic, and one whole run of the benchmark.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runConvertQuality } from '../src/convert-quality';
import { abssummSection, cleanTurn, loadMeetings, parseActionSentence } from '../src/convert-quality/meetings';
import { contentWords, ownerRole, rougeScores, scoreActions, totalActions } from '../src/convert-quality/scoring';

const TURNS = [
  { speaker: 'Project Manager', content: "Okay {vocalsound} so today we're choosing the battery and the case material ." },
  { speaker: 'Industrial Designer', content: 'I looked at the {disfmarker} the costs . Rubber cases are cheap and the kinetic battery costs more .' },
  { speaker: 'Marketing', content: 'Mm-hmm .' },
  { speaker: 'Marketing', content: 'Young buyers want a fruity colour , our survey says so .' },
  { speaker: 'Project Manager', content: 'Good . The industrial designer will build the clay prototype for the next meeting .' },
  { speaker: 'Project Manager', content: 'And marketing will prepare the evaluation criteria .' },
];

const ABSSUMM = `<?xml version="1.0" encoding="ISO-8859-1"?>
<nite:root nite:id="X.abssumm" xmlns:nite="http://nite.sourceforge.net/">
  <abstract nite:id="X.abstract"><sentence nite:id="s1">The team chose a battery &amp; case material.</sentence></abstract>
  <actions nite:id="X.actions">
    <sentence nite:id="s2">The Industrial Designer will build a clay prototype.</sentence>
    <sentence nite:id="s3">Marketing will prepare evaluation criteria.</sentence>
    <sentence nite:id="s4">The User Interface Designer and the Project Manager will write the report.</sentence>
  </actions>
</nite:root>`;

function makeSet(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convert-quality-'));
  for (const [folder, id] of [['train', 'XX01a'], ['test', 'XX02a']] as const) {
    fs.mkdirSync(path.join(dir, 'qmsum', folder), { recursive: true });
    const file = { general_query_list: [{ query: 'Summarize the whole meeting.', answer: 'The team chose the battery and the case material; a clay prototype comes next.' }], specific_query_list: [], meeting_transcripts: TURNS };
    fs.writeFileSync(path.join(dir, 'qmsum', folder, `${id}.json`), JSON.stringify(file));
  }
  fs.mkdirSync(path.join(dir, 'ami', 'abstractive'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'ami', 'abstractive', 'XX02a.abssumm.xml'), ABSSUMM);
  return dir;
}

describe('the evaluation set', () => {
  let dir: string;
  beforeAll(() => {
    dir = makeSet();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads QMSum turns as Speaker: lines without the corpus markup, in its split', () => {
    const meetings = loadMeetings(dir);
    expect(meetings.map((m) => [m.id, m.part])).toEqual([
      ['XX01a', 'tune'],
      ['XX02a', 'measure'],
    ]);
    const lines = meetings[0]!.transcript.split('\n');
    expect(lines[0]).toBe("Project Manager: Okay so today we're choosing the battery and the case material.");
    expect(lines).toHaveLength(6);
    expect(meetings[0]!.actions).toBeNull();
    expect(meetings[1]!.abstract).toBe('The team chose a battery & case material.');
    expect(meetings[1]!.actions!.map((a) => a.owners)).toEqual([['Industrial Designer'], ['Marketing'], ['User Interface', 'Project Manager']]);
  });

  it('says how to fetch it when it is missing', () => {
    expect(() => loadMeetings(path.join(dir, 'nothing'))).toThrow(/fetch-convert-eval/);
  });

  it('cleans and parses what the sources hold', () => {
    expect(cleanTurn('So {gap} we {disfmarker} we go , right ?')).toBe('So we we go, right?');
    expect(abssummSection(ABSSUMM, 'decisions')).toEqual([]);
    expect(parseActionSentence('The group will meet again after lunch.')).toMatchObject({ owners: ['Team'], task: 'meet again after lunch' });
    expect(parseActionSentence('The marketing expert is to look at trends.')).toMatchObject({ owners: ['Marketing'], task: 'look at trends' });
  });
});

describe('scores', () => {
  const refs = [parseActionSentence('The Industrial Designer will build a clay prototype.'), parseActionSentence('Marketing will prepare evaluation criteria.')];

  it('finds a reference when an item holds most of its content words, and checks the owner', () => {
    expect(contentWords('Building the prototypes')).toEqual(new Set(['build', 'prototyp']));
    const score = scoreActions(refs, [
      { owner: 'Industrial Designer', task: 'Build the clay prototype for the next meeting' },
      { owner: 'Team', task: 'Prepare the evaluation criteria' },
      { owner: 'Team', task: 'Order pizza' },
    ]);
    expect(score).toEqual({ references: 2, found: 2, ownerCorrect: 1, returned: 3 });
    expect(totalActions([score, { references: 2, found: 0, ownerCorrect: 0, returned: 0 }])).toMatchObject({ recall: 0.5, owner_accuracy: 0.5, items_over_reference: 0.75 });
  });

  it('does not count an item sharing only a word', () => {
    expect(scoreActions(refs, [{ owner: 'Marketing', task: 'Prepare lunch' }]).found).toBe(0);
    expect(ownerRole('Unassigned')).toBe('Unassigned');
    expect(ownerRole('User Interface')).toBe('User Interface');
  });

  it('gives ROUGE 1 for the reference itself and less for another text', () => {
    expect(rougeScores('the team chose a battery', 'the team chose a battery')).toEqual({ rouge1: 1, rouge2: 1 });
    expect(rougeScores('a different sentence', 'the team chose a battery').rouge1).toBeLessThan(0.5);
  });
});

describe('a whole run', () => {
  it('scores summaries on both parts and the measured part\'s action items', async () => {
    const dir = makeSet();
    try {
      const report = await runConvertQuality(dir, () => undefined);
      const parts = report.result.parts as Record<string, { meetings: number; summary: { rouge1: number }; actions: { references: number; recall: number } | null }>;
      expect(parts.tune!.meetings).toBe(1);
      expect(parts.tune!.actions).toBeNull();
      expect(parts.measure!.summary.rouge1).toBeGreaterThan(0);
      expect(parts.measure!.actions!.references).toBe(3);
      // The two people's items are in the transcript, said plainly: the local engine finds them.
      expect(parts.measure!.actions!.recall).toBeCloseTo(2 / 3, 2);
      expect(report.failures).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
