/**
 * Topics: the noun phrases a transcript keeps coming back to ("sync bug", "search latency"),
 * for an email subject or a notes heading. A phrase is a run of adjectives and nouns ending in
 * a noun; it scores by how often it occurs, longer phrases a little more, and people, dates,
 * numbers and generic words ("thing", "week", "call") are left out.
 */
import type { Sentence, Token } from './document';

const GENERIC = new Set([
  'time', 'week', 'weeks', 'day', 'days', 'thing', 'things', 'people', 'person', 'lot', 'way', 'number', 'numbers',
  'minute', 'minutes', 'percent', 'today', 'call', 'meeting', 'point', 'question', 'side', 'part', 'start', 'end',
  'bit', 'year', 'month', 'months', 'hour', 'hours', 'something', 'everything', 'anything', 'one', 'idea', 'sense',
  'note', 'notes', 'moment', 'kind', 'sort', 'stuff', 'yeah', 'okay', 'morning', 'afternoon', 'evening', 'night',
  'answer', 'problem', 'issue', 'option', 'options', 'item', 'items', 'action', 'team', 'everyone', 'word', 'words',
  'last', 'next', 'first', 'second', 'third', 'same', 'other', 'few', 'more', 'much', 'many', 'whole', 'big', 'new',
  'good', 'great', 'main', 'real', 'little', 'long', 'quick', 'short', 'sure', 'own', 'able', 'top', 'best', 'hand',
]);
const MODIFIER_POS = new Set(['ADJ', 'NOUN', 'PROPN']);
const HEAD_POS = new Set(['NOUN', 'PROPN']);

function usable(t: Token, isPerson: (w: string) => boolean): boolean {
  if (t.stop || t.entity !== null) return false;
  if (!/^[\p{L}][\p{L}'’-]*$/u.test(t.value)) return false;
  if (isPerson(t.value)) return false;
  return true;
}

/** Tokens with hyphenated compounds ("sign" "-" "on") merged into one word. */
function compounds(tokens: Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const t = tokens[i]!;
    const dash = tokens[i + 1];
    const next = tokens[i + 2];
    if ((dash?.value === '-' || dash?.value === '/') && dash.joined && next?.joined && /^[\p{L}]/u.test(next.value) && /^[\p{L}]/u.test(t.value)) {
      out.push({ ...next, value: `${t.value}${dash.value}${next.value}`, lemma: `${t.value.toLowerCase()}${dash.value}${next.lemma}`, stop: false, pos: HEAD_POS.has(next.pos) || next.pos === 'ADP' ? 'NOUN' : next.pos });
      i += 2;
    } else out.push(t);
  }
  return out;
}

/** The `limit` most frequent topic phrases of `sentences`, lower case unless proper nouns. */
export function findTopics(sentences: Sentence[], limit: number, isPerson: (word: string) => boolean): string[] {
  const counts = new Map<string, { phrase: string; count: number; first: number }>();
  // The first word of a sentence is capitalised whatever it is; only later capitals mark names.
  const initial = new Set<Token>();
  const count = (run: Token[], at: number) => {
    const head = run[run.length - 1]!;
    if (GENERIC.has(head.lemma) || GENERIC.has(head.value.toLowerCase())) return;
    const words = run.map((t) => (/^[A-Z]{2,}|[A-Z].*[A-Z]/.test(t.value) || (t.pos === 'PROPN' && !initial.has(t)) ? t.value : t.value.toLowerCase()));
    const key = run.map((t, j) => (j === run.length - 1 ? t.lemma : t.value.toLowerCase())).join(' ');
    const entry = counts.get(key) ?? { phrase: words.join(' '), count: 0, first: at };
    entry.count += 1;
    counts.set(key, entry);
  };
  for (const s of sentences) {
    const toks = compounds(s.tokens);
    const first = toks.find((t) => t.pos !== 'PUNCT');
    if (first) initial.add(first);
    let i = 0;
    while (i < toks.length) {
      const run: Token[] = [];
      while (i < toks.length) {
        const t = toks[i]!;
        const modifier = MODIFIER_POS.has(t.pos) || (t.pos === 'VERB' && /ed$/.test(t.value) && HEAD_POS.has(toks[i + 1]?.pos ?? ''));
        if (!modifier || !usable(t, isPerson)) break;
        run.push(t);
        i += 1;
      }
      i += 1;
      while (run.length > 0 && GENERIC.has(run[0]!.value.toLowerCase())) run.shift();
      if (run.length === 0 || run.length > 4) continue;
      // Every sub-phrase that ends in a noun counts: "export service runbook" also counts
      // "export service", so the phrase said most often in any form wins.
      if (run.length === 1) {
        if (HEAD_POS.has(run[0]!.pos)) count(run, s.index);
        continue;
      }
      for (let from = 0; from < run.length - 1; from += 1) {
        for (let to = from + 2; to <= Math.min(run.length, from + 3); to += 1) {
          const sub = run.slice(from, to);
          if (HEAD_POS.has(sub[sub.length - 1]!.pos)) count(sub, s.index);
        }
      }
    }
  }
  const scored = [...counts.entries()]
    .map(([key, e]) => ({ key, ...e, score: e.count * (key.includes(' ') ? 1 + 0.6 * (key.split(' ').length - 1) : 0.7) }))
    .filter((e) => e.count >= 2)
    .sort((a, b) => b.score - a.score || a.first - b.first);
  const chosen: typeof scored = [];
  for (const e of scored) {
    if (chosen.length >= limit) break;
    const words = new Set(e.key.split(' '));
    if (chosen.some((c) => c.key.split(' ').some((w) => words.has(w)))) continue;
    chosen.push(e);
  }
  return chosen.map((c) => c.phrase);
}
