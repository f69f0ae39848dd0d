/**
 * Ordinary speech must come out of redaction unchanged: numbers in times, years, counts, prices,
 * versions and ranges; "at" and "dot" in ordinary sentences; dates without a birth cue. Each
 * sentence alone, and the whole page as one pocketsphinx-shaped timeline (where sentences run
 * into each other without punctuation) and one written one.
 */
import { REDACTION_POLICIES, type Timeline, type TimelineWord } from '@murmur/contract';
import { redactTimeline } from '../src/redaction/redact-timeline';

/** As pocketsphinx writes speech: lower-case words, no digits, no punctuation. */
const SPOKEN = [
  "i have one or two things to say about the budget",
  "we met at the station at ten thirty and left at eleven fifteen",
  "twenty twenty four was a good year for the company",
  "the meeting is on march fifteenth at three o'clock",
  "she was born in nineteen eighty five in a small town",
  "we sold three hundred and twenty five units in the first quarter",
  "count from one to ten one two three four five six seven eight nine ten",
  "ten nine eight seven six five four three two one lift off",
  "look at this dot com bubble it was crazy",
  "i bought it at amazon dot com last week",
  "we were looking at the data dot by dot",
  "the score was two to one at half time",
  "page forty two line seven of chapter three",
  "the temperature dropped to minus five degrees overnight",
  "give me a call at some point next week",
  "route sixty six runs from chicago to santa monica",
  "he ran the hundred meters in nine point eight seconds",
  "version two point oh point one point three is out",
  "our office is at one two three main street",
  "the flight leaves at six forty five from gate twenty two",
  "a b c d e f g is how the song starts",
  "i think it is about two or three hundred dollars",
  "we need five or six people for the team",
  "in two thousand and eight the market crashed",
  "there were four thousand five hundred people at the game",
  "the population grew from eight million to nine million",
  "can you see the difference between the two versions",
  "we are at the end of the day",
  "my birthday party is next saturday at the park",
  "she celebrated her birthday in june with friends",
  "at the end of the day it is what it is",
  "i was at the doctor at nine and at the bank at ten",
  "it costs nineteen ninety nine plus tax",
  "we have two kids and three dogs and one cat",
  "the bus leaves at seven fifteen and arrives at eight forty five",
  "i will be there at around five or six",
  "it was nineteen ninety nine when we moved to oregon",
  "the first second and third places went to our team",
  "oh well it is what it is",
  "he scored twenty three points and grabbed eleven rebounds",
  "the recipe needs two eggs one cup of flour and half a cup of milk",
  "please turn to page one hundred and twelve",
  "she works at the hospital on fifth avenue",
  "i was born and raised in a small town near the coast",
  "the conference is in april and the deadline is the first of march",
  "the kids were counting one two three four five six seven eight nine ten",
  "it costs four ninety nine or three for ten dollars",
  "we stayed at the hotel for two nights",
];

/** As whisper writes speech: digits, punctuation, capitals. */
const WRITTEN = [
  "The meeting is at 10:30 on March 15, 2024.",
  "In 2019, 2020 and 2021 revenue grew by 12%, 15% and 18%.",
  "Call me back when you can, I'll be at the office.",
  "We shipped 1,500 units at $12.99 each.",
  "The ratio was 3:1 and the score 21-17.",
  "Version 1.2.3 fixed the bug; 2.0 is next.",
  "See chapter 4, pages 120-135.",
  "The address is 221B Baker Street, London.",
  "He was born in 1985 and moved in 2001.",
  "Room 404 on floor 12, building 7.",
  "The flight is UA 1234 at 6:45 pm.",
  "Our ZIP code is 90210 and the area is 310.",
  "We counted 1 2 3 4 5 6 7 8 9 10 aloud.",
  "The order number is 12345 and it ships Tuesday.",
  "Email is the best way to reach me at work.",
  "I'll be at home. Dot your i's and cross your t's.",
  "The years 1999 2000 2001 2002 were busy.",
  "The Q3 revenue was $4.5 million, up 12% from Q2.",
  "Meet me at 7:30 pm at gate B12.",
  "Our phone lines open at 9 and close at 5.",
  "We drove 1,200 miles in 3 days on I-95.",
  "The password policy requires 12 characters.",
  "He was born in the 1980s and started school in 1991.",
  "Python 3.12 and Node 24 are supported.",
  "Call us any time; we are happy to help.",
  "The invoice INV-2024-0042 is due on 30 June.",
  "Chapter 11, verse 28 says it plainly.",
];

const OPTIONS = { policies: [...REDACTION_POLICIES], style: 'entity_name' as const };

function timelineOf(sentences: readonly string[]): Timeline {
  const words: TimelineWord[] = sentences.join(' ').split(' ').map((text, i) => ({ text, start: i * 0.3, end: i * 0.3 + 0.25, confidence: 0.9, speaker: i % 50 < 25 ? 'S1' : 'S2' }));
  const segments = sentences.map((text, i) => ({ start: i, end: i + 1, text, speaker: null }));
  return { text: sentences.join(' '), segments, words, speakers: [{ id: 'S1', name: null }, { id: 'S2', name: null }] };
}

describe('ordinary speech', () => {
  it.each([...SPOKEN, ...WRITTEN].map((s) => [s]))('leaves %j unchanged', (sentence) => {
    const { timeline, found } = redactTimeline({ text: sentence, segments: [], words: [], speakers: [] }, OPTIONS);
    expect(timeline.text).toBe(sentence);
    expect(found).toEqual({});
  });

  it.each([
    ['spoken', SPOKEN],
    ['written', WRITTEN],
  ] as const)('leaves the %s page unchanged as one timeline', (_kind, sentences) => {
    const input = timelineOf(sentences);
    const { timeline, found } = redactTimeline(input, OPTIONS);
    expect(found).toEqual({});
    expect(timeline).toEqual(input);
  });
});
