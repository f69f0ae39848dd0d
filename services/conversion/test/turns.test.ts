/** Speaker labels are believed only when most lines carry one. */
import { splitTurns } from '../src/nlp/turns';

describe('splitTurns', () => {
  it('reads "Name: words" lines as turns, joining consecutive lines of one speaker', () => {
    expect(splitTurns('Priya: Hi.\nMarco: Morning.\nMarco: Coffee first.\nPriya: Sure.')).toEqual([
      { speaker: 'Priya', text: 'Hi.' },
      { speaker: 'Marco', text: 'Morning. Coffee first.' },
      { speaker: 'Priya', text: 'Sure.' },
    ]);
  });

  it('reads timestamps and numbered speakers', () => {
    expect(splitTurns('[00:00:01] Speaker 1: Hello.\n00:05 Speaker 2: Hi there.\n(00:09) Dr. Lopez: Welcome.')).toEqual([
      { speaker: 'Speaker 1', text: 'Hello.' },
      { speaker: 'Speaker 2', text: 'Hi there.' },
      { speaker: 'Dr. Lopez', text: 'Welcome.' },
    ]);
  });

  it('continues a turn on an unlabelled line', () => {
    expect(splitTurns('Priya: First.\nstill Priya.\nMarco: Yes.')).toEqual([
      { speaker: 'Priya', text: 'First. still Priya.' },
      { speaker: 'Marco', text: 'Yes.' },
    ]);
  });

  it('keeps running text as paragraphs when labels are rare or are not speakers', () => {
    const note = 'Note to self: buy milk.\nAction item: call Dana.\nThe rest of the note is plain.\nMore plain text.';
    expect(splitTurns(note).every((t) => t.speaker === null)).toBe(true);
    expect(splitTurns('One paragraph.\n\nAnother one.')).toEqual([
      { speaker: null, text: 'One paragraph.' },
      { speaker: null, text: 'Another one.' },
    ]);
  });

  it('returns nothing for blank text', () => {
    expect(splitTurns(' \n\n ')).toEqual([]);
  });
});
