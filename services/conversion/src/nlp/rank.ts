/**
 * Sentence ranking. Each sentence is a TF-IDF vector of its content lemmas (nouns, proper
 * nouns, verbs, adjectives, numbers; stop words and light verbs out), L2-normalised. Its
 * centrality is its degree in the cosine-similarity graph of all sentences — the sum of its
 * similarities to every other sentence — which equals its dot product with the sum of all
 * vectors minus one, so it costs O(terms) per sentence instead of the O(n²) of a pairwise graph.
 * Selection is maximal marginal relevance: the best sentences that do not repeat each other.
 */
import type { Sentence } from './document';
import { isMeta } from './clean';

const CONTENT_POS = new Set(['NOUN', 'PROPN', 'VERB', 'ADJ', 'NUM']);
const LIGHT = new Set([
  'be', 'have', 'do', 'say', 'get', 'go', 'think', 'know', 'want', 'make', 'let', 'mean', 'guess', 'like', 'need',
  'see', 'look', 'come', 'take', 'put', 'okay', 'yeah', 'thing', 'lot', 'bit', 'kind', 'sort', 'way', 'stuff',
  'right', 'sure', 'good', 'great', 'really', 'just', 'gonna', 'wanna', 'will', 'can', 'would', 'could', 'should',
]);
const INFORMATIVE_ENTITIES = new Set(['CARDINAL', 'PERCENT', 'MONEY', 'DATE', 'DURATION', 'ORDINAL', 'TIME']);

/**
 * Cue phrases (Edmundson's "bonus words"): speakers flag what matters with them in any
 * domain — "the root cause was", "top priority", "we decided", "the big picture".
 */
const CUE = /\b(?:root cause|main (?:point|issue|problem|pain|goal|risk|takeaway)|key (?:idea|point|takeaway|question)|(?:top|first) priority|biggest (?:risk|problem|issue|concern)|the (?:goal|problem|issue|plan|decision|bottom line|big picture|requirement)s? (?:is|was|are|were)|big picture|bottom line|overall|in total|in summary|to summari[sz]e|decided|agreed|conclusion|hard requirements?|deadline)\b/i;

/** Uncertainty a speaker voices about their own sentence. */
const HEDGED = /\b(?:i don'?t know|i'?m not sure|i (?:guess|suppose)|no idea|or something|or whatever|i don'?t think)\b/i;

export type Vector = Map<string, number>;

/** The content lemmas of a sentence, the terms ranking and keyphrases count. */
export function contentTerms(s: Sentence): string[] {
  const out: string[] = [];
  for (const t of s.tokens) {
    if (!CONTENT_POS.has(t.pos) || t.stop) continue;
    const lemma = t.lemma.replace(/[^\p{L}\p{N}'-]/gu, '');
    if (lemma.length < 2 || LIGHT.has(lemma)) continue;
    out.push(lemma);
  }
  return out;
}

function normalise(v: Vector): Vector {
  let norm = 0;
  for (const x of v.values()) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (const [k, x] of v) v.set(k, x / norm);
  return v;
}

export function cosine(a: Vector, b: Vector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [k, x] of small) {
    const y = large.get(k);
    if (y !== undefined) dot += x * y;
  }
  return dot;
}

/** A sentence with its vector and scores. */
export interface Ranked {
  sentence: Sentence;
  terms: string[];
  vector: Vector;
  /** Degree centrality, scaled to 0..1 over the transcript. */
  centrality: number;
  /** Centrality adjusted for length, numbers and housekeeping: what summaries sort by. */
  score: number;
  /** Carries numbers, amounts, dates or percentages. */
  informative: boolean;
}

/** Ranks every sentence of a transcript. Linear in the number of tokens. */
export function rankSentences(sentences: Sentence[]): Ranked[] {
  const terms = sentences.map(contentTerms);
  const df = new Map<string, number>();
  for (const ts of terms) for (const t of new Set(ts)) df.set(t, (df.get(t) ?? 0) + 1);
  const n = Math.max(1, sentences.length);
  const vectors = terms.map((ts) => {
    const v: Vector = new Map();
    for (const t of ts) v.set(t, (v.get(t) ?? 0) + 1);
    for (const [t, tf] of v) v.set(t, (1 + Math.log(tf)) * Math.log(1 + n / (df.get(t) ?? 1)));
    return normalise(v);
  });
  const sum: Vector = new Map();
  for (const v of vectors) for (const [k, x] of v) sum.set(k, (sum.get(k) ?? 0) + x);
  const degree = vectors.map((v) => (v.size === 0 ? 0 : Math.max(0, cosine(v, sum) - 1)));
  const max = degree.reduce((m, d) => (d > m ? d : m), 1e-9);
  // Openings usually say what the recording is about: a small bonus for the first sentences.
  const lead = new Set(sentences.filter((s) => !isMeta(s.text) && !s.text.trim().endsWith('?')).slice(0, 3).map((s) => s.index));
  return sentences.map((sentence, i) => {
    const centrality = degree[i]! / max;
    const count = terms[i]!.length;
    const informative = sentence.tokens.some((t) => t.entity !== null && INFORMATIVE_ENTITIES.has(t.entity)) || /\d/.test(sentence.text);
    let score = centrality;
    if (count < 3) score *= 0.2;
    else if (count < 5) score *= 0.7;
    if (sentence.tokens.length > 45) score *= 0.8;
    if (informative) score += 0.12;
    if (lead.has(sentence.index)) score += 0.08;
    if (sentence.text.trim().endsWith('?')) score *= 0.4;
    if (isMeta(sentence.text)) score *= 0.1;
    // Fragments that lean on a neighbour ("Option one, …", "It added …") read badly alone.
    if (/^\W*(?:option|step|point|number)\s+\w+\s*[,:]/i.test(sentence.text)) score *= 0.5;
    else if (/^\W*(?:it|this|that|these|those)\b/i.test(sentence.text) && !/^\W*(?:this|that) (?:is|was) (?:the|a|an|our)\b/i.test(sentence.text)) score *= 0.85;
    if (/^\W*(?:if|unless|maybe|perhaps)\b/i.test(sentence.text)) score *= 0.8;
    // Thinking aloud ("I don't know, maybe …", "I'm not sure") is talk, not what was said.
    if (HEDGED.test(sentence.text)) score *= 0.8;
    if (CUE.test(sentence.text)) score += 0.15;
    return { sentence, terms: terms[i]!, vector: vectors[i]!, centrality, score, informative };
  });
}

/**
 * The `k` best of `ranked` by `scoreOf`, skipping any too similar to one already chosen
 * (maximal marginal relevance), returned in transcript order.
 */
export function selectDiverse(ranked: Ranked[], k: number, scoreOf: (r: Ranked) => number = (r) => r.score, maxSimilarity = 0.5): Ranked[] {
  if (k <= 0) return [];
  const pool = ranked.filter((r) => scoreOf(r) > 0).sort((a, b) => scoreOf(b) - scoreOf(a));
  const chosen: Ranked[] = [];
  for (const r of pool) {
    if (chosen.length >= k) break;
    if (chosen.some((c) => cosine(c.vector, r.vector) > maxSimilarity)) continue;
    chosen.push(r);
  }
  return chosen.sort((a, b) => a.sentence.index - b.sentence.index);
}
