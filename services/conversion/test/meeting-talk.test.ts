/**
 * Rules for real meetings (issue #17): people talking repeat themselves and cut words off, and
 * much of what they say with "I'll" or "let's" is about the meeting itself — not a task. Quoted
 * sentences read repaired; talk about the meeting, states of mind and tasks with nothing to act
 * on never become action items, while commitments beside them still do.
 */
import { extractArtifact, type ActionItemsArtifact } from '../src/index';
import { repairDisfluencies, tidySentence } from '../src/nlp/clean';

const RECORDED = new Date('2026-11-23T09:30:00Z');
const items = (transcript: string) => (extractArtifact(transcript, 'action_items', '', RECORDED) as ActionItemsArtifact).items;

describe('spoken repairs', () => {
  it.each([
    ['if if if we go with it', 'if we go with it'],
    ['I think I think it is really really important', 'I think it is really important'],
    ["we're gon we're gonna need a bigger budget", "we're gonna need a bigger budget"],
    ['that would be a tha that would be fine', 'that would be a that would be fine'],
    ['and m I thought about other functions', 'and I thought about other functions'],
  ])('%j reads %j', (said, repaired) => {
    expect(repairDisfluencies(said)).toBe(repaired);
  });

  it('keeps short words that are words, and punctuation on the kept saying', () => {
    expect(repairDisfluencies('I was a about to say no, no.')).toBe('I was a about to say no.');
    expect(repairDisfluencies('We need to go to the store.')).toBe('We need to go to the store.');
    expect(repairDisfluencies('Plan B is ready, Jo Johnson said, on a 3 x 4 grid')).toBe('Plan B is ready, Jo Johnson said, on a 3 x 4 grid');
    expect(tidySentence('um so the the budget is is fine')).toBe('The budget is fine.');
    expect(tidySentence('Mm I think we decided to use a kinetic charger,')).toBe('I think we decided to use a kinetic charger.');
  });
});

describe('talk about the meeting is not a task', () => {
  const MEETING = [
    'Project Manager: Okay, I will go next.',
    "Marketing: We'll look at that in a second.",
    "Project Manager: Let's have a quick lunch break.",
    "Industrial Designer: I'll put it all together.",
    "User Interface: I'll come back to that later.",
    "Marketing: I guess I'll admit I don't know what it stands for.",
    "User Interface: We'll make sure to,",
    'Project Manager: Marketing will send the user survey results to the whole team by Friday.',
    'Industrial Designer: I will finish the component cost sheet tomorrow.',
  ].join('\n');

  it('keeps only the two commitments, owned by their speakers', () => {
    expect(items(MEETING).map((i) => [i.owner, i.task])).toEqual([
      ['Marketing', 'Send the user survey results to the whole team'],
      ['Industrial Designer', 'Finish the component cost sheet'],
    ]);
  });
});

describe('speakers named in passing', () => {
  it('owns "the industrial designer will …" by the speaker labelled so', () => {
    const transcript = ['Project Manager: Right. The industrial designer will build the clay prototype.', 'Industrial Designer: Sure.', 'Marketing: Okay.'].join('\n');
    expect(items(transcript).map((i) => [i.owner, i.task])).toEqual([['Industrial Designer', 'Build the clay prototype']]);
  });
});
