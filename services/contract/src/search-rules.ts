/**
 * Passage search (GET /search, the `search` tool, LibraryService.SearchPassages): how sources are
 * cut into passages, what a query may be, and the public words for sources and rankings. The
 * library cuts and ranks by these; the gateway checks and describes them from here.
 */
import { invalidParam, type MurmurError } from './errors';

/** A search query's length bound, in characters (the `q` of /search and /recordings alike). */
export const SEARCH_QUERY_MAX_CHARS = 500;

/**
 * A recording's passages: a speaker turn, cut into windows when it is long. A window closes at
 * the first segment boundary past {@link PASSAGE_TARGET_SECONDS}, and before a segment that would
 * take it past {@link PASSAGE_MAX_SECONDS}; a speaker change always closes it.
 */
export const PASSAGE_TARGET_SECONDS = 30;
export const PASSAGE_MAX_SECONDS = 60;

/**
 * Text without times (a thread's item, a knowledge base's description, a transcript without
 * segments) is cut on sentence ends into passages of at most this many characters (a passage of
 * speech at ~150 words a minute, ~45 s).
 */
export const PASSAGE_MAX_CHARS = 700;

/** What a passage was cut from, as the public API names it (the result's `type`, the `type` filter). */
export const SEARCH_SOURCE_TYPES = ['recording', 'thought_thread', 'knowledge_base'] as const;
export type SearchSourceType = (typeof SEARCH_SOURCE_TYPES)[number];

/** How a page was ranked: full text alone, or full text and embeddings fused (reciprocal rank fusion). */
export const SEARCH_RANKINGS = ['text', 'hybrid'] as const;
export type SearchRankingWord = (typeof SEARCH_RANKINGS)[number];

/** A question for POST /ask and the `ask` tool, in characters. */
export const ASK_QUESTION_MAX_CHARS = 1_000;

/** How many passages an answer is drawn from (the best of the search). */
export const ASK_MAX_PASSAGES = 8;

/** How an answer was made: quoted from the passages (the local engine) or written by an LLM from them. */
export const ANSWER_MODES = ['extractive', 'generative'] as const;
export type AnswerModeWord = (typeof ANSWER_MODES)[number];

/** The id prefix of a passage (`psg_…`). */
export const PASSAGE_ID_PREFIX = 'psg';

/**
 * The query's shape rules, before any database sees it: not blank, at most
 * {@link SEARCH_QUERY_MAX_CHARS}, quotes balanced, no empty phrase, and at least one term that is
 * not excluded (a query of only `-words` would match nearly everything). Whether its words are all
 * stop words is the database's to say (the library answers that with the same invalid_request).
 * Returns the trimmed query.
 */
export function searchQueryOf(value: string, param = 'q'): string {
  const q = value.trim();
  if (q === '') throw invalidParam(param, `${param} must not be empty: pass the words to find.`);
  if ([...q].length > SEARCH_QUERY_MAX_CHARS) throw invalidParam(param, `${param} must be at most ${SEARCH_QUERY_MAX_CHARS} characters.`);
  if ((q.match(/"/g)?.length ?? 0) % 2 === 1) throw invalidParam(param, `${param} has an unclosed quote: close the "phrase" or remove the quote.`);
  if (/""/.test(q)) throw invalidParam(param, `${param} has an empty "phrase": put words between the quotes.`);
  const terms = q
    .replace(/"[^"]*"/g, ' phrase ')
    .split(/\s+/)
    .filter((t) => t !== '' && t.toLowerCase() !== 'or');
  if (terms.length > 0 && terms.every((t) => t.startsWith('-'))) {
    throw invalidParam(param, `${param} excludes words but asks for none: add at least one word to find (only -excluded words would match nearly everything).`);
  }
  return q;
}

/** The one refusal of a query whose words are all stop words ("the", "and", …) or punctuation. */
export function noSearchableWords(param = 'q'): MurmurError {
  return invalidParam(param, `${param} has no words to search for (only common words such as "the" or punctuation): add a distinctive word.`);
}
