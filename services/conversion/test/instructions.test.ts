/** What the local engine takes from free-text instructions. */
import { parseInstructions } from '../src/nlp/instructions';

describe('parseInstructions', () => {
  it.each([
    ['', { length: 'default', count: null, bullets: false, recipient: null, sender: null, formal: false }],
    ['keep it short', { length: 'short' }],
    ['a detailed summary please', { length: 'detailed' }],
    ['3 sentences', { count: 3, bullets: false }],
    ['five bullets', { count: 5, bullets: true }],
    ['in 7 bullet points', { count: 7, bullets: true }],
    ['400 points', { count: 50 }],
    ['formal, to Priya Shah, signed as Marco', { formal: true, recipient: 'Priya Shah', sender: 'Marco' }],
    ['email for Dana from Tom', { recipient: 'Dana', sender: 'Tom' }],
  ])('reads "%s"', (text, expected) => {
    expect(parseInstructions(text)).toMatchObject(expected);
  });
});
