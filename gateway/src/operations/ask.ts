/** POST /ask and the MCP `ask` tool: a question answered from the caller's passages, with citations (issue 34). */
import { noteCredits } from '../http/call-note';
import { conversion } from '@murmur/proto';
import type { OperationContext } from './context';
import type { ChargeContext } from './convert';
import { presentSearchResult } from './present-search';
import { parseDateTime, type AskInput } from './schemas';
import { searchSourcesOf } from './search';

const MODE_WORDS: Record<number, 'extractive' | 'generative'> = {
  [conversion.AnswerMode.ANSWER_MODE_EXTRACTIVE]: 'extractive',
  [conversion.AnswerMode.ANSWER_MODE_GENERATIVE]: 'generative',
};

export async function ask(ctx: OperationContext, input: AskInput, charge: ChargeContext) {
  const res = await ctx.clients.conversion.answer(
    {
      userId: ctx.principal.userId,
      question: input.question,
      sources: searchSourcesOf(input.type?.join(',')),
      folderId: input.folder_id ?? '',
      recordingId: input.recording_id ?? '',
      createdAfter: input.created_after !== undefined ? parseDateTime('created_after', input.created_after) : undefined,
      createdBefore: input.created_before !== undefined ? parseDateTime('created_before', input.created_before) : undefined,
      idempotencyKey: charge.idempotencyKey,
      admissionId: charge.admissionId,
    },
    { signal: charge.signal, deadlineMs: 5 * 60_000 },
  );
  if (res.rateLimit) charge.onRateLimit?.(res.rateLimit);
  noteCredits(res.creditsCharged);
  return presentAnswer(input.question, res);
}

export function presentAnswer(question: string, a: conversion.AnswerResponse) {
  const passages = a.passages.map(presentSearchResult);
  const byId = new Map(passages.map((p) => [p.passage_id, p]));
  return {
    id: a.id,
    object: 'answer' as const,
    question,
    answer: a.answer,
    mode: MODE_WORDS[a.mode] ?? 'extractive',
    citations: a.citedPassageIds.flatMap((id) => {
      const p = byId.get(id);
      return p ? [{ passage_id: p.passage_id, type: p.type, id: p.id, title: p.title, start: p.start, end: p.end, speaker: p.speaker, speaker_name: p.speaker_name, url: p.url }] : [];
    }),
    passages,
    credits_charged: a.creditsCharged,
    engine: a.engine,
    created_at: a.createdAt ? a.createdAt.toISOString() : null,
  };
}
