/** Due dates read against the recording's time (Tuesday 13 January 2026, 10:00 UTC). */
import { findDue, normalizeDue, withWeekday } from '../src/nlp/dates';

const REF = new Date('2026-01-13T10:00:00Z');

describe('findDue', () => {
  it.each([
    ['by Friday', '2026-01-16'],
    ['by Tuesday (the same weekday: today)', '2026-01-13'],
    ['by next Friday', '2026-01-23'],
    ['by next Tuesday', '2026-01-20'],
    ['by tomorrow', '2026-01-14'],
    ['tomorrow morning', '2026-01-14'],
    ['by end of day', '2026-01-13'],
    ['by EOD', '2026-01-13'],
    ['by the end of the week', '2026-01-16'],
    ['by the end of next week', '2026-01-23'],
    ['by the end of the month', '2026-01-31'],
    ['by the end of the quarter', '2026-03-31'],
    ['by the 20th', '2026-01-20'],
    ['on the 3rd (already past this month)', '2026-02-03'],
    ['by March 3rd', '2026-03-03'],
    ['by the 3rd of February', '2026-02-03'],
    ['in two weeks', '2026-01-27'],
    ['before Friday the 23rd', '2026-01-23'],
  ])('reads "%s"', (phrase, iso) => {
    const text = `Dana will send the mocks ${phrase.replace(/ \(.*\)$/, '')}.`;
    expect(findDue(text, REF)?.iso).toBe(iso);
  });

  it('returns the span of the phrase with its preposition, so the task can drop it', () => {
    const text = 'Dana will send the mocks by the end of the week, then rest.';
    const due = findDue(text, REF)!;
    expect(text.slice(due.start, due.end)).toBe('by the end of the week');
  });

  it.each([
    ['a duration', 'move the sync to 30 minutes'],
    ['a length of time', 'We have 9 engineers for 8 weeks.'],
    ['an appointment without a deadline word', 'The dentist can do Monday at 10 in the morning.'],
    ['no date at all', 'Dana will send the mocks.'],
  ])('ignores %s', (_name, text) => {
    expect(findDue(text, REF)).toBeNull();
  });

  it('reads a deadline across a year end', () => {
    expect(findDue('by Friday', new Date('2025-12-30T09:00:00Z'))?.iso).toBe('2026-01-02');
    expect(findDue('by the end of the month', new Date('2025-12-30T09:00:00Z'))?.iso).toBe('2025-12-31');
  });
});

describe('normalizeDue (dates a model wrote)', () => {
  it.each([
    ['2026-01-16', '2026-01-16'],
    ['Thursday', '2026-01-15'],
    ['end of the week', '2026-01-16'],
    ['', ''],
    ['2026-02-30', ''],
    ['someday', ''],
  ])('turns "%s" into "%s"', (value, iso) => {
    expect(normalizeDue(value, REF)).toBe(iso);
  });
});

describe('withWeekday', () => {
  it('prefixes the weekday', () => {
    expect(withWeekday('2026-01-16')).toBe('Fri 2026-01-16');
    expect(withWeekday('not a date')).toBe('not a date');
  });
});
