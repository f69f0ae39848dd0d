/**
 * How search-quality scores a ranked page against QMSum's labels. A passage is relevant to a
 * query when it comes from the query's meeting and its time range overlaps one of the query's
 * relevant spans (by more than a point: passages that only touch a span's edge do not count).
 *
 * - recall@k: the share of the query's spans that at least one of the first k passages overlaps;
 * - reciprocal rank@k: 1 / the rank of the first relevant passage, 0 when none is in the first k;
 * both averaged over queries, a query that got nothing (or was refused) counting 0.
 */
import type { TimeRange } from './meetings';

/** One passage of a page, as the scores need it. */
export interface RankedPassage {
  recordingId: string;
  /** Absent for a passage without times (never one of a recording with segments). */
  start?: number;
  end?: number;
}

/** What a query is answered by: its meeting's recording and the stretches of it that answer. */
export interface QueryTarget {
  recordingId: string;
  spans: readonly TimeRange[];
}

/** Two ranges share more than a point. */
export function overlaps(a: TimeRange, b: TimeRange): boolean {
  return a.start < b.end && b.start < a.end;
}

function overlapsSpan(p: RankedPassage, target: QueryTarget, span: TimeRange): boolean {
  return p.recordingId === target.recordingId && p.start !== undefined && p.end !== undefined && overlaps({ start: p.start, end: p.end }, span);
}

export function isRelevant(p: RankedPassage, target: QueryTarget): boolean {
  return target.spans.some((span) => overlapsSpan(p, target, span));
}

/** The share of the target's spans that one of the first `k` passages overlaps. */
export function recallAt(passages: readonly RankedPassage[], target: QueryTarget, k: number): number {
  if (target.spans.length === 0) return 0;
  const top = passages.slice(0, k);
  return target.spans.filter((span) => top.some((p) => overlapsSpan(p, target, span))).length / target.spans.length;
}

/** 1-based rank of the first relevant passage among the first `k`, or null. */
export function firstRelevantRank(passages: readonly RankedPassage[], target: QueryTarget, k: number): number | null {
  const i = passages.slice(0, k).findIndex((p) => isRelevant(p, target));
  return i < 0 ? null : i + 1;
}

/** One query's page, scored. `refused`: the service answered invalid_request (no searchable words, an unclosed quote). */
export interface QueryOutcome {
  refused: boolean;
  results: number;
  recall5: number;
  /** Rank of the first relevant passage within the first 10, null when none. */
  firstRelevant: number | null;
}

export const K_RECALL = 5;
export const K_RANK = 10;

export function scorePage(passages: readonly RankedPassage[] | 'refused', target: QueryTarget): QueryOutcome {
  if (passages === 'refused') return { refused: true, results: 0, recall5: 0, firstRelevant: null };
  return { refused: false, results: passages.length, recall5: recallAt(passages, target, K_RECALL), firstRelevant: firstRelevantRank(passages, target, K_RANK) };
}

export interface OutcomeSummary {
  queries: number;
  /** Answered with no passage at all (refusals not included). */
  zero_results: number;
  refused: number;
  recall_at_5: number;
  mrr_at_10: number;
  /** Share of queries with a relevant passage in the first 10. */
  hit_at_10: number;
  mean_results: number;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Averages over queries, every query counted (one with no results scores 0). */
export function summarizeOutcomes(outcomes: readonly QueryOutcome[]): OutcomeSummary {
  const n = outcomes.length;
  const mean = (f: (o: QueryOutcome) => number) => (n === 0 ? 0 : round(outcomes.reduce((s, o) => s + f(o), 0) / n));
  return {
    queries: n,
    zero_results: outcomes.filter((o) => !o.refused && o.results === 0).length,
    refused: outcomes.filter((o) => o.refused).length,
    recall_at_5: mean((o) => o.recall5),
    mrr_at_10: mean((o) => (o.firstRelevant === null ? 0 : 1 / o.firstRelevant)),
    hit_at_10: mean((o) => (o.firstRelevant === null ? 0 : 1)),
    mean_results: mean((o) => o.results),
  };
}

/**
 * The query with its words joined by OR, in websearch syntax ("What was said about hiring?" →
 * "What or was or said or about or hiring"): any one of its words matches. A diagnostic of what
 * a looser reading of natural-language questions would find; the service reads the query as
 * written (all words). Quotes and a leading `-` are dropped with the rest of the punctuation.
 */
export function anyWordQuery(query: string, maxChars = 500): string {
  const words = (query.match(/[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu) ?? []).filter((w) => w.toLowerCase() !== 'or');
  let out = '';
  for (const w of words) {
    const next = out === '' ? w : `${out} or ${w}`;
    if ([...next].length > maxChars) break;
    out = next;
  }
  return out;
}
