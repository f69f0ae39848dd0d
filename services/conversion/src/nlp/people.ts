/**
 * People in a transcript. wink's lite model tags proper nouns but has no PERSON entity, so a
 * run of capitalised proper nouns counts as a person when its first word is a known given name
 * or when it acts like one (the subject of "said", "thinks", "agreed", …) and never like an
 * organisation ("from X", "the X account", "X Health"). Speaker labels are people too. Later
 * first-name mentions ("Grace") are folded into the full name said earlier ("Grace Liu").
 */
import type { Sentence, TranscriptDoc } from './document';
import { GIVEN_NAMES, NOT_NAMES, TEAM_WORDS } from './names';

/** Verbs whose subject is almost always a person. */
const PERSON_VERBS = new Set([
  'say', 'think', 'mention', 'tell', 'ask', 'agree', 'want', 'feel', 'seem', 'join', 'explain', 'suggest', 'argue',
  'love', 'estimate', 'interview', 'promise', 'offer', 'volunteer', 'prefer', 'believe', 'worry', 'complain',
  'point', 'confirm', 'recommend', 'propose', 'dial', 'lead', 'own', 'pair', 'present', 'demo', 'write', 'wrote',
]);
/** Words after a name that make it an organisation or a product. */
const ORG_AFTER = new Set([
  'account', 'accounts', 'team', 'teams', 'inc', 'inc.', 'ltd', 'llc', 'corp', 'gmbh', 'health', 'logistics', 'labs',
  'bank', 'systems', 'group', 'partners', 'solutions', 'capital', 'media', 'foods', 'airlines', 'insurance',
  'university', 'hospital', 'hospitals', 'clinic', 'energy', 'retail', 'freight', 'travel', 'schools', 'co', 'app',
  'platform', 'cloud', 'api', 'directory', 'region', 'tenant', 'plan', 'store', 'office',
]);
const ORG_BEFORE = new Set(['from', 'at', 'for', 'the', 'their', 'our', 'with the', 'in', 'on', 'via', 'using', 'about', 'like']);

/** People found in a transcript. */
export interface People {
  /** Speaker labels, in order of first turn. */
  attendees: string[];
  /** Everyone else taken for a person, in order of first mention (full names where known). */
  mentioned: string[];
  /** The canonical form of a name ("Grace" → "Grace Liu"), or null when it is not a person. */
  canonical(name: string): string | null;
}

const isCapitalised = (v: string) => /^[A-Z][a-z'’-]+$/.test(v) || /^[A-Z][a-z]+[A-Z][a-z]+$/.test(v);

interface Candidate {
  name: string;
  first: number;
  given: boolean;
  evidence: number;
  org: number;
  /** Times it was capitalised where only a name would be (not first in its sentence). */
  inside: number;
}

function runsOf(s: Sentence): { words: string[]; at: number }[] {
  const runs: { words: string[]; at: number }[] = [];
  let i = 0;
  while (i < s.tokens.length) {
    const t = s.tokens[i]!;
    if (t.pos === 'PROPN' && isCapitalised(t.value) && !NOT_NAMES.has(t.value.toLowerCase())) {
      const words = [t.value];
      let j = i + 1;
      while (j < s.tokens.length && words.length < 3) {
        const n = s.tokens[j]!;
        if (!(n.pos === 'PROPN' || n.pos === 'NOUN') || !isCapitalised(n.value) || NOT_NAMES.has(n.value.toLowerCase())) break;
        words.push(n.value);
        j += 1;
      }
      runs.push({ words, at: i });
      i = j;
    } else i += 1;
  }
  return runs;
}

/** Finds the people of `doc`. */
export function findPeople(doc: TranscriptDoc): People {
  const candidates = new Map<string, Candidate>();
  for (const s of doc.sentences) {
    for (const run of runsOf(s)) {
      const name = run.words.join(' ');
      const firstWord = run.words[0]!.toLowerCase();
      if (TEAM_WORDS.has(firstWord) && run.words.length === 1) continue;
      const c = candidates.get(name) ?? { name, first: s.index, given: GIVEN_NAMES.has(firstWord), evidence: 0, org: 0, inside: 0 };
      const before = s.tokens[run.at - 1];
      if (before && !['PUNCT', 'INTJ', 'SYM'].includes(before.pos)) c.inside += 1;
      candidates.set(name, c);
      const next = s.tokens[run.at + run.words.length];
      const after = s.tokens[run.at + run.words.length + (next?.value === "'s" ? 1 : 0)];
      const prev = s.tokens[run.at - 1];
      const prev2 = s.tokens[run.at - 2];
      const nextLemma = next?.pos === 'AUX' ? s.tokens[run.at + run.words.length + 1]?.lemma : next?.lemma;
      if (nextLemma && PERSON_VERBS.has(nextLemma)) c.evidence += 1;
      if (next?.lemma === 'will' || next?.lemma === 'be') c.evidence += 0.25;
      // "with X", "and X" only back a known given name: "with Okta", "and Greek yogurt" are not people.
      if (c.given && prev && ['with', 'hi', 'hey', 'thanks', 'thank', 'dear', 'and'].includes(prev.value.toLowerCase())) c.evidence += 0.5;
      if (after && ORG_AFTER.has(after.value.toLowerCase())) c.org += 1;
      if (run.words.some((w) => ORG_AFTER.has(w.toLowerCase()))) c.org += 1;
      const word = prev ? prev.value.toLowerCase() : '';
      const words = prev2 ? `${prev2.value.toLowerCase()} ${word}` : word;
      if (!c.given && (ORG_BEFORE.has(word) || ORG_BEFORE.has(words))) c.org += 1;
    }
  }
  const attendees = [...doc.speakers];
  const people = [...candidates.values()]
    .filter((c) => (c.given && c.org === 0) || (c.given && c.evidence >= 1) || (!c.given && c.evidence >= 2 && c.org === 0 && c.inside > 0))
    .sort((a, b) => a.first - b.first)
    .map((c) => c.name);
  for (const s of attendees) if (!people.includes(s)) people.push(s);

  // Fold a first name ("Grace") or a surname ("Larson") into the one full name it belongs to.
  const full = people.filter((p) => p.includes(' '));
  const canonicalOf = new Map<string, string>();
  for (const p of people) {
    const first = p.includes(' ') ? [] : full.filter((f) => f.split(' ')[0] === p);
    const last = p.includes(' ') || GIVEN_NAMES.has(p.toLowerCase()) ? [] : full.filter((f) => f.split(' ').pop() === p);
    canonicalOf.set(p, first.length === 1 ? first[0]! : last.length === 1 ? last[0]! : p);
  }
  const mentioned: string[] = [];
  for (const p of people) {
    const c = canonicalOf.get(p)!;
    if (!mentioned.includes(c) && !attendees.includes(c)) mentioned.push(c);
  }
  return {
    attendees,
    mentioned,
    canonical(name) {
      const direct = canonicalOf.get(name);
      if (direct) return direct;
      const first = name.split(' ')[0]!;
      if (GIVEN_NAMES.has(first.toLowerCase()) && !NOT_NAMES.has(first.toLowerCase())) return canonicalOf.get(first) ?? name;
      return null;
    },
  };
}
