import { MurmurError } from '@murmur/contract';
import { library } from '@murmur/proto';
import {
  artifactFormatEnum,
  artifactFormatWord,
  contextSourceKindEnum,
  contextSourceKindWord,
  threadItemKindEnum,
  threadItemKindWord,
} from '../src/kinds';
import {
  artifactKindOf,
  charCount,
  createdAtOf,
  creditsOf,
  dateRangeOf,
  durationOf,
  nameOf,
  ownerIdOf,
  queryOf,
  titleOf,
  transcriptOf,
} from '../src/validation';

function paramOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    if (err instanceof MurmurError && err.code === 'invalid_request') return err.param;
    throw err;
  }
  throw new Error('expected invalid_request');
}

const NOW = new Date('2026-01-15T12:00:00Z');
const seg = (startSeconds: number, endSeconds: number, text = 'x') => ({ startSeconds, endSeconds, text });

describe('input validation', () => {
  it.each<[string, () => unknown, string]>([
    ['an owner id of another kind', () => ownerIdOf('key_0123456789abcdefghij'), 'owner_id'],
    ['an empty owner id', () => ownerIdOf(''), 'owner_id'],
    ['a 501-character title', () => titleOf('t'.repeat(501), 500), 'title'],
    ['a title with a NUL', () => titleOf('a\u0000b', 500), 'title'],
    ['an empty folder name', () => nameOf('   '), 'name'],
    ['a 201-character name', () => nameOf('n'.repeat(201)), 'name'],
    ['a negative duration', () => durationOf(-1), 'duration_seconds'],
    ['an infinite duration', () => durationOf(Number.POSITIVE_INFINITY), 'duration_seconds'],
    ['a 501-character query', () => queryOf('q'.repeat(501)), 'query'],
    ['a transcript over 5,000,000 characters', () => transcriptOf({ text: 'a'.repeat(5_000_001), language: 'en', segments: [] }), 'transcript.text'],
    ['a made-up language', () => transcriptOf({ text: 'hi', language: 'english!', segments: [] }), 'transcript.language'],
    ['a segment ending before it starts', () => transcriptOf({ text: 'hi', language: 'en', segments: [seg(2, 1)] }), 'transcript.segments'],
    ['a segment at a negative time', () => transcriptOf({ text: 'hi', language: 'en', segments: [seg(-1, 1)] }), 'transcript.segments'],
    ['a segment at NaN', () => transcriptOf({ text: 'hi', language: 'en', segments: [seg(Number.NaN, 1)] }), 'transcript.segments'],
    ['an upper-case artifact kind', () => artifactKindOf('Summary'), 'kind'],
    ['an empty artifact kind', () => artifactKindOf(''), 'kind'],
    ['a 41-character artifact kind', () => artifactKindOf('k'.repeat(41)), 'kind'],
    ['negative credits', () => creditsOf(-5), 'credits_charged'],
    ['fractional credits', () => creditsOf(1.5), 'credits_charged'],
    ['a created_at in the future', () => createdAtOf(new Date(NOW.getTime() + 3_600_000), NOW), 'created_at'],
    ['a created_at before 1970', () => createdAtOf(new Date('1969-12-31T23:59:59Z'), NOW), 'created_at'],
    ['an invalid date', () => createdAtOf(new Date(Number.NaN), NOW), 'created_at'],
    ['created_after equal to created_before', () => dateRangeOf(NOW, NOW), 'created_after'],
    ['created_after later than created_before', () => dateRangeOf(new Date(NOW.getTime() + 1), NOW), 'created_after'],
    ['a created_before past the year 9999', () => dateRangeOf(undefined, new Date(Date.UTC(10000, 0, 1))), 'created_before'],
  ])('rejects %s', (_name, fn, param) => {
    expect(paramOf(fn)).toBe(param);
  });

  it.each<[string, () => unknown, unknown]>([
    ['a trimmed title', () => titleOf('  Standup  ', 500), 'Standup'],
    ['an empty title', () => titleOf('', 500), ''],
    ['a 500-character title of emoji', () => titleOf('😀'.repeat(500), 500).length, 1000],
    ['a blank query as no query', () => queryOf('   '), undefined],
    ['an empty language', () => transcriptOf({ text: '', language: '', segments: [] }).language, ''],
    ['a regional language tag', () => transcriptOf({ text: 'oi', language: 'pt-BR', segments: [] }).language, 'pt-BR'],
    ['segments as start/end/text', () => transcriptOf({ text: 'hi', language: 'en', segments: [seg(0, 1.5, 'hi')] }).segments, [{ start: 0, end: 1.5, text: 'hi' }]],
    ['a snake_case artifact kind', () => artifactKindOf('action_items'), 'action_items'],
    ['an absent created_at as now', () => createdAtOf(undefined, NOW), NOW],
    ['a created_at within clock skew', () => createdAtOf(new Date(NOW.getTime() + 60_000), NOW).getTime(), NOW.getTime() + 60_000],
    ['an open date range', () => dateRangeOf(undefined, undefined), {}],
  ])('accepts %s', (_name, fn, expected) => {
    expect(fn()).toEqual(expected);
  });

  it('counts characters as code points, like Postgres', () => {
    expect(charCount('abc')).toBe(3);
    expect(charCount('😀😀')).toBe(2);
    expect(charCount('')).toBe(0);
  });
});

describe('enum ↔ stored word', () => {
  it.each<[library.ArtifactFormat, string | undefined]>([
    [library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN, 'markdown'],
    [library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN, 'plain'],
    [library.ArtifactFormat.ARTIFACT_FORMAT_UNSPECIFIED, undefined],
    [42 as library.ArtifactFormat, undefined],
  ])('artifact format %p is %p', (value, word) => {
    expect(artifactFormatWord(value)).toBe(word);
    if (word) expect(artifactFormatEnum(word as 'markdown' | 'plain')).toBe(value);
  });

  it.each<[library.ThreadItemKind, string | undefined]>([
    [library.ThreadItemKind.THREAD_ITEM_KIND_NOTE, 'note'],
    [library.ThreadItemKind.THREAD_ITEM_KIND_RECORDING, 'recording'],
    [library.ThreadItemKind.THREAD_ITEM_KIND_QUESTION, 'question'],
    [library.ThreadItemKind.THREAD_ITEM_KIND_ANSWER, 'answer'],
    [library.ThreadItemKind.THREAD_ITEM_KIND_UNSPECIFIED, undefined],
  ])('thread item kind %p is %p', (value, word) => {
    expect(threadItemKindWord(value)).toBe(word);
    if (word) expect(threadItemKindEnum(word as 'note')).toBe(value);
  });

  it.each<[library.ContextSourceKind, string | undefined]>([
    [library.ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING, 'recording'],
    [library.ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER, 'folder'],
    [library.ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE, 'knowledge_base'],
    [library.ContextSourceKind.CONTEXT_SOURCE_KIND_UNSPECIFIED, undefined],
  ])('context source kind %p is %p', (value, word) => {
    expect(contextSourceKindWord(value)).toBe(word);
    if (word) expect(contextSourceKindEnum(word as 'folder')).toBe(value);
  });
});
