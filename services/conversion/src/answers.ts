/**
 * What `ask` shares across engines (issue 34): the search query a question becomes, the
 * numbered passages an engine reads, the prompt and JSON schema of the LLM engines, the local
 * engine's extractive answer, and the check of an engine's citations. Pure.
 */
import { EngineError, type AnswerInput, type AnswerPassage, type EngineAnswer } from './engines/engine';

/**
 * A question as a passage search: its words joined with OR (websearch syntax), so a passage
 * that holds some of them matches and one holding more ranks higher (ts_rank_cd). Postgres drops
 * the stop words ("what", "did", "we"); quotes and minus signs never reach the query.
 */
export function questionQuery(question: string, maxChars = 500): string {
  const words = [...new Set((question.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’]*/gu) ?? []).map((w) => w.replace(/['’]+$/, '')))].filter((w) => w !== 'or');
  let query = '';
  for (const word of words) {
    const next = query === '' ? word : `${query} or ${word}`;
    if ([...next].length > maxChars) break;
    query = next;
  }
  return query;
}

/** "[3] Weekly sync (at 12:05, Maria): …": how a passage is shown to a model. */
export function passageLine(p: AnswerPassage): string {
  const where = [p.start !== null ? `at ${clock(p.start)}` : '', p.speaker].filter(Boolean).join(', ');
  return `[${p.n}] ${p.title || 'Untitled'}${where ? ` (${where})` : ''}: ${p.text}`;
}

function clock(seconds: number): string {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** The system and user messages of an LLM answer. */
export function answerPrompt(input: Pick<AnswerInput, 'question' | 'passages'>): { system: string; user: string } {
  const system = [
    'You answer questions about the user’s own voice notes, meetings and notes, using only the numbered passages given.',
    'Answer with one JSON object that follows the given JSON schema and nothing else.',
    'answer: a short, direct answer in the language of the question; after each statement, cite the passages it rests on as [n].',
    'citations: the numbers of every passage you cited.',
    'If the passages do not answer the question, say so in one sentence and cite nothing. Never use outside knowledge; never invent names, numbers or dates.',
  ].join('\n');
  const user = `Passages:\n${input.passages.map(passageLine).join('\n')}\n\nQuestion: ${input.question}`;
  return { system, user };
}

/** The JSON schema of an LLM answer. */
export const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    answer: { type: 'string' },
    citations: { type: 'array', items: { type: 'integer' } },
  },
  required: ['answer', 'citations'],
  additionalProperties: false,
} as const;

/**
 * A model's JSON answer, checked: text present, citations numbers of given passages (the [n]
 * marks in the text count as citations too; numbers of passages that were not given are dropped
 * from both, as a model's slip, never shown as a citation of nothing).
 */
export function modelAnswer(json: string, passageCount: number): EngineAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new EngineError('the model’s answer is not JSON', { cause: err });
  }
  const value = parsed as { answer?: unknown; citations?: unknown };
  if (typeof value.answer !== 'string' || value.answer.trim() === '') throw new EngineError('the model’s answer has no text');
  const valid = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= passageCount;
  const answer = value.answer.replace(/\[(\d+)\]/g, (mark, n: string) => (valid(Number(n)) ? mark : '')).replace(/\s+([.,;:!?])/g, '$1').trim();
  const marked = [...answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
  const listed = Array.isArray(value.citations) ? value.citations.filter(valid) : [];
  return { answer, citations: [...new Set([...marked, ...listed])], mode: 'generative' };
}

/** Lower-case content words of a text, for overlap with the question (a crude stem: the first 5 letters). */
function stems(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/\p{L}[\p{L}\p{N}'’]*/gu) ?? []).filter((w) => w.length > 2 && !STOP.has(w)).map((w) => w.slice(0, 5)));
}

const STOP = new Set(
  'the and for that this with what when where which who whom whose why how did does was were are has have had you your our ours about from into onto over under they them their there then than but not can could would should will shall may might must its his her him she also just very been being some any all each more most such only own same too out off again once here both few nor yet'.split(' '),
);

/** Sentences of a passage, as they are written. */
function sentencesOf(text: string): string[] {
  return (text.match(/[^.!?]+(?:[.!?]+|$)/g) ?? []).map((s) => s.trim()).filter((s) => /[\p{L}\p{N}]/u.test(s));
}

/**
 * The local engine's answer: the sentences of the passages that share the most words with the
 * question (ties: the better-ranked passage first), at most three and one per passage, quoted
 * in the order of their passages' rank, each with its citation. Never a word that is not in a
 * passage. With no sentence sharing a word, the best passage's opening sentence.
 */
export function extractiveAnswer(input: Pick<AnswerInput, 'question' | 'passages'>, maxSentences = 3): EngineAnswer {
  const wanted = stems(input.question);
  const scored: Array<{ n: number; rank: number; sentence: string; score: number }> = [];
  input.passages.forEach((p, rank) => {
    for (const sentence of sentencesOf(p.text)) {
      let score = 0;
      for (const stem of stems(sentence)) if (wanted.has(stem)) score += 1;
      if (score > 0) scored.push({ n: p.n, rank, sentence, score });
    }
  });
  scored.sort((a, b) => b.score - a.score || a.rank - b.rank);
  const chosen: typeof scored = [];
  for (const s of scored) {
    if (chosen.length >= maxSentences) break;
    if (!chosen.some((c) => c.n === s.n)) chosen.push(s);
  }
  if (chosen.length === 0 && input.passages[0]) {
    const first = sentencesOf(input.passages[0].text)[0] ?? input.passages[0].text;
    chosen.push({ n: input.passages[0].n, rank: 0, sentence: first, score: 0 });
  }
  chosen.sort((a, b) => a.rank - b.rank);
  return {
    answer: chosen.map((c) => `${c.sentence} [${c.n}]`).join(' '),
    citations: chosen.map((c) => c.n),
    mode: 'extractive',
  };
}
