/**
 * How convert-quality scores an engine against people's references: action-item recall, owner
 * accuracy and noise (issue 17's definitions), and ROUGE-1/2 of summaries (js-rouge, F1,
 * case-insensitive).
 */
import * as rouge from 'js-rouge';
import winkNLP, { type ItemToken } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { roleOf, type ReferenceAction } from './meetings';

/** An output item counts as finding a reference when it holds more than this share of the reference's content words. */
export const MATCH_SHARE = 0.5;

let nlp: ReturnType<typeof winkNLP> | undefined;

/** The stems of a text's content words (no stop words, punctuation or fillers), as a set. */
export function contentWords(text: string): Set<string> {
  nlp ??= winkNLP(model, []);
  const its = nlp.its;
  const out = new Set<string>();
  nlp.readDoc(text.toLowerCase()).tokens().each((t: ItemToken) => {
    const type = t.out(its.type);
    if ((type !== 'word' && type !== 'number') || t.out(its.stopWordFlag)) return;
    // wink's typings give `stem` a signature `out` does not take; at run time it is an ordinary token property.
    const stem = t.out(its.stem as unknown as typeof its.normal);
    if (stem.length > 1) out.add(stem);
  });
  return out;
}

/** The share of `reference`'s content words that `candidate` also holds (0 when it has none). */
export function coverage(reference: Set<string>, candidate: Set<string>): number {
  if (reference.size === 0) return 0;
  let hit = 0;
  for (const w of reference) if (candidate.has(w)) hit += 1;
  return hit / reference.size;
}

/** An output item, as any engine's action_items data gives it. */
export interface OutputItem {
  owner: string;
  task: string;
}

/** An output owner as a reference role: a role's name, "Team" for the group, or itself. */
export function ownerRole(owner: string): string {
  if (/^(?:unassigned|)$/i.test(owner.trim())) return 'Unassigned';
  return roleOf(owner) ?? owner.trim();
}

export interface ActionScore {
  references: number;
  found: number;
  ownerCorrect: number;
  returned: number;
}

/**
 * One meeting's action items against its references: a reference is found when some item holds
 * more than {@link MATCH_SHARE} of its content words (the item's owner is not part of the
 * match); its owner is right when the best-matching item's owner is one of the reference's.
 */
export function scoreActions(references: ReferenceAction[], items: OutputItem[]): ActionScore {
  const itemWords = items.map((i) => contentWords(i.task));
  let found = 0;
  let ownerCorrect = 0;
  for (const ref of references) {
    const words = contentWords(ref.task);
    let best = -1;
    let bestShare = MATCH_SHARE;
    itemWords.forEach((w, i) => {
      const share = coverage(words, w);
      if (share > bestShare) {
        best = i;
        bestShare = share;
      }
    });
    if (best < 0) continue;
    found += 1;
    if (ref.owners.includes(ownerRole(items[best]!.owner))) ownerCorrect += 1;
  }
  return { references: references.length, found, ownerCorrect, returned: items.length };
}

export interface ActionTotals {
  meetings: number;
  references: number;
  returned: number;
  /** found ÷ references. */
  recall: number;
  /** owner right ÷ found. */
  owner_accuracy: number;
  /** returned ÷ references. */
  items_over_reference: number;
}

export function totalActions(scores: ActionScore[]): ActionTotals {
  const sum = (f: (s: ActionScore) => number) => scores.reduce((a, s) => a + f(s), 0);
  const references = sum((s) => s.references);
  const found = sum((s) => s.found);
  const returned = sum((s) => s.returned);
  const ratio = (a: number, b: number) => (b === 0 ? 0 : Number((a / b).toFixed(3)));
  return {
    meetings: scores.length,
    references,
    returned,
    recall: ratio(found, references),
    owner_accuracy: ratio(sum((s) => s.ownerCorrect), found),
    items_over_reference: ratio(returned, references),
  };
}

/** ROUGE-1 and ROUGE-2 F1 of `candidate` against `reference`, case-insensitive. */
export function rougeScores(candidate: string, reference: string): { rouge1: number; rouge2: number } {
  if (!candidate.trim() || !reference.trim()) return { rouge1: 0, rouge2: 0 };
  return {
    rouge1: rouge.n(candidate, reference, { n: 1, caseSensitive: false }),
    rouge2: rouge.n(candidate, reference, { n: 2, caseSensitive: false }),
  };
}
