/**
 * The one pass of wink-nlp over a transcript: speaker turns → sentences → tokens with part of
 * speech, lemma, stop-word flag and entity type. Everything the local engine decides (ranking,
 * people, action items, decisions) reads this structure; nothing else calls wink.
 */
import winkNLP, { type ItemEntity, type ItemSentence } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { GIVEN_NAMES } from './names';
import { splitTurns, type Turn } from './turns';

/** One token of a sentence (whitespace tokens are dropped). */
export interface Token {
  value: string;
  lemma: string;
  pos: string;
  stop: boolean;
  /** wink entity type (DATE, CARDINAL, PERCENT, MONEY, …) when the token is part of one. */
  entity: string | null;
  /** Written without whitespace before it ("sign" "-" "on" in "sign-on"). */
  joined: boolean;
}

/** One sentence, in transcript order. */
export interface Sentence {
  index: number;
  turn: number;
  /** The turn's speaker label; null for running text. */
  speaker: string | null;
  text: string;
  tokens: Token[];
}

/** A transcript read once. */
export interface TranscriptDoc {
  turns: Turn[];
  sentences: Sentence[];
  /** Distinct speaker labels in order of first appearance (empty for running text). */
  speakers: string[];
}

type Wink = ReturnType<typeof winkNLP>;
let shared: Wink | undefined;

/** wink with the pipes the engine uses (no sentiment, no custom entities). Built once. */
function wink(): Wink {
  shared ??= winkNLP(model, ['sbd', 'negation', 'pos', 'ner']);
  return shared;
}

/** Words wink rightly reads as abbreviations when a period follows. */
const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'st', 'vs', 'etc', 'inc', 'ltd', 'jr', 'sr', 'no', 'approx', 'dept', 'est', 'fig', 'min', 'max', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'co', 'corp', 'e.g', 'i.e']);

/**
 * Splits where wink missed a sentence end because the word before the period is also an
 * abbreviation ("… should weigh in. Yuki interviewed …" reads "in." as inches).
 */
function splitMissedBoundaries(tokens: Token[]): Token[][] {
  const parts: Token[][] = [];
  let current: Token[] = [];
  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    const m = /^([a-z]{2,})\.$/.exec(t.value);
    if (m && next && /^[A-Z]/.test(next.value) && !ABBREVIATIONS.has(m[1]!) && current.length >= 3) {
      current.push({ ...t, value: m[1]!, lemma: t.lemma.replace(/\.$/, '') }, { value: '.', lemma: '.', pos: 'PUNCT', stop: false, entity: null, joined: true });
      parts.push(current);
      current = [];
    } else current.push(t);
  });
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Text of tokens, spaced as written. */
function textOf(tokens: Token[]): string {
  return tokens.map((t, i) => (i > 0 && !t.joined ? ` ${t.value}` : t.value)).join('').trim();
}

const CALENDAR = /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june|july|august|september|october|november|december)\b/g;

/**
 * Capitals for a transcript written without any (some speech recognisers): "i" → "I", known
 * given names, weekdays and months — so people and owners are found as in cased text.
 */
export function restoreCase(text: string): string {
  const letters = text.replace(/[^\p{L}]/gu, '');
  const upper = letters.replace(/[^\p{Lu}]/gu, '').length;
  if (letters.length === 0 || upper / letters.length > 0.01) return text;
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return text
    .replace(/\bi\b(?=(?:['’](?:m|ll|d|ve))?\b)/g, 'I')
    .replace(CALENDAR, cap)
    .replace(/\b[a-z]+\b/g, (w) => (GIVEN_NAMES.has(w) && !AMBIGUOUS_NAMES.has(w) ? cap(w) : w));
}

/** Given names that are more often ordinary words when written in lower case. */
const AMBIGUOUS_NAMES = new Set(['will', 'may', 'mark', 'bill', 'rose', 'grace', 'joy', 'jack', 'rob', 'sue', 'art', 'max', 'ruby', 'sky', 'jay', 'kay', 'bob', 'pat', 'sam', 'ted', 'jo', 'mo', 'dean', 'hope', 'faith', 'june', 'nick', 'ken', 'kim', 'lee', 'ian', 'ida', 'eve', 'ed', 'tom', 'mia', 'una', 'jan', 'jean', 'lina', 'nia', 'rui', 'wei', 'jin', 'jun']);

/** Words before which a run-on, unpunctuated sentence is cut into readable pieces. */
const CUT_BEFORE = new Set(['so', 'okay', 'ok', 'alright', 'anyway', 'also', 'then', 'but', 'because']);
const COMMITMENT_VERBS = new Set(['will', "'ll", '’ll', 'need', 'needs', 'should', 'must', 'agreed', 'is', 'am', 'has', 'have', 'to']);

/**
 * Splits a run-on sentence (speech recognised without punctuation) into pieces of about
 * 10–35 tokens: before a discourse word ("so", "okay", "but", …) or before a new commitment
 * ("I'll …", "Jonas will …"), and at 35 tokens at the latest.
 */
function splitRunOn(tokens: Token[], maxTokens: number): Token[][] {
  if (tokens.length <= maxTokens) return [tokens];
  const parts: Token[][] = [];
  let current: Token[] = [];
  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    const lower = t.value.toLowerCase();
    const commitment = (t.value === 'I' || lower === 'we' || t.pos === 'PROPN') && next !== undefined && COMMITMENT_VERBS.has(next.value.toLowerCase());
    const cut = current.length >= 35 || (current.length >= 10 && CUT_BEFORE.has(lower)) || (current.length >= 4 && commitment);
    if (cut && current.length > 0) {
      parts.push(current);
      current = [];
    }
    current.push(t);
  });
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Reads `transcript` into turns, sentences and tokens. Linear in its length. */
export function readTranscript(transcript: string): TranscriptDoc {
  const nlp = wink();
  const its = nlp.its;
  const turns = splitTurns(restoreCase(transcript));
  // Speech recognised without punctuation: under one sentence end per 60 words.
  const words = transcript.split(/\s+/).length;
  const ends = (transcript.match(/[.!?](?=\s|$)/g) ?? []).length;
  const runOnLimit = words > 60 && ends * 60 < words ? 25 : 80;
  const sentences: Sentence[] = [];
  turns.forEach((turn, turnIndex) => {
    const doc = nlp.readDoc(turn.text);
    const all = doc.tokens();
    const values = all.out() as string[];
    const pos = all.out(its.pos) as string[];
    // wink types its.lemma with an addons parameter the `out` overloads do not accept.
    const lemma = all.out(its.lemma as never) as unknown as string[];
    const stop = all.out(its.stopWordFlag) as unknown as boolean[];
    const spaces = all.out(its.precedingSpaces) as string[];
    const entity: (string | null)[] = values.map(() => null);
    doc.entities().each((e: ItemEntity) => {
      const [from, to] = e.out(its.span) as unknown as [number, number];
      const type = e.out(its.type) as string;
      for (let i = from; i <= to; i += 1) entity[i] = type;
    });
    doc.sentences().each((s: ItemSentence) => {
      const toks = s.tokens();
      const first = toks.length() > 0 ? toks.itemAt(0).index() : 0;
      const tokens: Token[] = [];
      for (let i = first; i < first + toks.length(); i += 1) {
        if (pos[i] === 'SPACE') continue;
        tokens.push({ value: values[i]!, lemma: (lemma[i] ?? values[i]!).toLowerCase(), pos: pos[i]!, stop: stop[i] === true, entity: entity[i] ?? null, joined: tokens.length > 0 && (spaces[i] ?? '') === '' });
      }
      // A punctuated sentence is rarely over 80 tokens; past that the recogniser wrote none.
      // In a transcript without punctuation every run-on is cut into pieces.
      const parts = splitMissedBoundaries(tokens).flatMap((p) => splitRunOn(p, p.length > runOnLimit ? 35 : Infinity));
      for (const part of parts) {
        const text = parts.length === 1 ? s.out().replace(/\s+/g, ' ').trim() : textOf(part);
        if (text !== '' && part.some((t) => t.pos !== 'PUNCT')) {
          sentences.push({ index: sentences.length, turn: turnIndex, speaker: turn.speaker, text, tokens: part });
        }
      }
    });
  });
  const speakers = [...new Set(turns.map((t) => t.speaker).filter((s): s is string => s !== null))];
  return { turns, sentences, speakers };
}
