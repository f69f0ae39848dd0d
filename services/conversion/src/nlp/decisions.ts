/**
 * Decisions: sentences where the group settles something — "we agreed …", "we decided …",
 * "we're going with …", "the decision is …". A person agreeing to do something ("Raj agreed
 * to move the sync") is an action item, not a decision.
 */
import { tidySentence } from './clean';
import type { Sentence } from './document';

const DECISION = [
  /\b(?:we|they|everyone|the team|the group|all of us)\s+(?:have\s+|had\s+|all\s+)?(?:agreed|decided|settled on|chose|concluded|aligned on|signed off on)\b/i,
  /\b(?:we|I)(?:'re| are|'ll| will)\s+go(?:ing)? with\b/i,
  /\blet['’]s go with\b/i,
  /\b(?:the )?decision (?:is|was)\b/i,
  /\bit['’]s decided\b/i,
  /\bwe(?:'re| are) not going to\b/i,
];

/** The decisions of `sentences`, tidied, in order. */
export function findDecisions(sentences: Sentence[]): { sentence: number; text: string }[] {
  const out: { sentence: number; text: string }[] = [];
  for (const s of sentences) {
    if (s.text.trim().endsWith('?')) continue;
    if (!DECISION.some((re) => re.test(s.text))) continue;
    const text = tidySentence(s.text);
    if (text.split(/\s+/).length < 5) continue;
    out.push({ sentence: s.index, text });
  }
  return out;
}
