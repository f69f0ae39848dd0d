/**
 * Public JSON shapes (DESIGN.md §3: snake_case, ISO-8601 UTC, typed ids, `object` names) of
 * the services' messages. REST returns them as bodies and MCP as structuredContent, so a
 * field is named once, here.
 */
import { billing, library } from '@murmur/proto';

export function iso(d: Date | undefined): string | null {
  return d ? d.toISOString() : null;
}

const FORMAT: Record<number, 'markdown' | 'plain'> = {
  [library.ArtifactFormat.ARTIFACT_FORMAT_UNSPECIFIED]: 'markdown',
  [library.ArtifactFormat.ARTIFACT_FORMAT_MARKDOWN]: 'markdown',
  [library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN]: 'plain',
};

const ITEM_KIND: Record<number, string> = {
  [library.ThreadItemKind.THREAD_ITEM_KIND_NOTE]: 'note',
  [library.ThreadItemKind.THREAD_ITEM_KIND_RECORDING]: 'recording',
  [library.ThreadItemKind.THREAD_ITEM_KIND_QUESTION]: 'question',
  [library.ThreadItemKind.THREAD_ITEM_KIND_ANSWER]: 'answer',
};

const SOURCE_KIND: Record<number, string> = {
  [library.ContextSourceKind.CONTEXT_SOURCE_KIND_RECORDING]: 'recording',
  [library.ContextSourceKind.CONTEXT_SOURCE_KIND_FOLDER]: 'folder',
  [library.ContextSourceKind.CONTEXT_SOURCE_KIND_KNOWLEDGE_BASE]: 'knowledge_base',
};

export function presentArtifact(a: library.Artifact) {
  return {
    id: a.id,
    object: 'artifact' as const,
    kind: a.kind,
    format: FORMAT[a.format] ?? 'markdown',
    content: a.content,
    credits_charged: a.creditsCharged,
    recording_id: a.recordingId || null,
    created_at: iso(a.createdAt),
  };
}

export function presentRecordingSummary(r: library.Recording) {
  return {
    id: r.id,
    object: 'recording' as const,
    title: r.title,
    folder_id: r.folderId || null,
    duration_seconds: r.durationSeconds,
    preview: r.preview,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export function presentRecording(r: library.Recording) {
  return {
    ...presentRecordingSummary(r),
    transcript: r.transcript
      ? {
          text: r.transcript.text,
          language: r.transcript.language || null,
          segments: r.transcript.segments.map((s) => ({ start: s.startSeconds, end: s.endSeconds, text: s.text })),
        }
      : null,
    artifacts: r.artifacts.map(presentArtifact),
  };
}

export function presentThreadSummary(t: library.ThoughtThread) {
  return {
    id: t.id,
    object: 'thought_thread' as const,
    title: t.title,
    item_count: t.itemCount,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

export function presentThread(t: library.ThoughtThread) {
  return {
    ...presentThreadSummary(t),
    items: t.items.map((i) => ({
      id: i.id,
      kind: ITEM_KIND[i.kind] ?? 'note',
      text: i.text,
      recording_id: i.recordingId || null,
      created_at: iso(i.createdAt),
    })),
    context_sources: t.contextSources.map((c) => ({
      id: c.id,
      kind: SOURCE_KIND[c.kind] ?? 'recording',
      ref_id: c.refId,
      title: c.title,
      added_at: iso(c.addedAt),
    })),
  };
}

export function presentFolder(f: library.Folder) {
  return {
    id: f.id,
    object: 'folder' as const,
    name: f.name,
    recording_count: f.recordingCount,
    created_at: iso(f.createdAt),
    updated_at: iso(f.updatedAt),
  };
}

export function presentKnowledgeBase(k: library.KnowledgeBase) {
  return {
    id: k.id,
    object: 'knowledge_base' as const,
    name: k.name,
    description: k.description,
    recording_count: k.recordingCount,
    created_at: iso(k.createdAt),
    updated_at: iso(k.updatedAt),
  };
}

export function presentPlan(p: billing.Plan | undefined) {
  if (!p) return null;
  return {
    id: p.id,
    name: p.name,
    monthly_credits: p.monthlyCredits,
    rate_limit_per_minute: p.rateLimitPerMinute,
    max_audio_bytes: p.maxAudioBytes,
    max_transcript_chars: p.maxTranscriptChars,
    prepaid_credit_price_cents: p.prepaidCreditPriceCents,
    transcription_credits_per_minute: p.transcriptionCreditsPerMinute,
    conversion_credits_per_1k_chars: p.conversionCreditsPer1kChars,
  };
}

export function presentRateLimit(r: billing.RateLimitState | undefined) {
  return {
    limit: r?.limit ?? 0,
    remaining: r?.remaining ?? 0,
    window_seconds: r?.windowSeconds ?? 60,
    reset_seconds: r?.resetSeconds ?? 0,
  };
}

export function presentUsage(u: billing.Usage) {
  return {
    object: 'usage' as const,
    plan: presentPlan(u.plan),
    credits: {
      monthly_allowance: u.plan?.monthlyCredits ?? 0,
      monthly_remaining: u.monthlyCreditsRemaining,
      prepaid_remaining: u.prepaidCreditsRemaining,
      reserved: u.creditsReserved,
      resets_at: iso(u.periodEnd),
    },
    period: { start: iso(u.periodStart), end: iso(u.periodEnd) },
    spending: { cap_cents: u.spendingCapCents, spent_cents: u.spendCents },
    rate_limit: presentRateLimit(u.rateLimit),
    counters: {
      credits_used: u.creditsUsed,
      transcriptions: u.transcriptions,
      transcription_seconds: u.transcriptionSeconds,
      conversions: u.conversions,
    },
  };
}

/** The list envelope shared by every paged route and tool. */
export function presentList<T>(data: T[], page: library.PageInfo | undefined) {
  return {
    object: 'list' as const,
    data,
    has_more: page?.hasMore ?? false,
    next_cursor: page?.hasMore ? page.nextCursor : null,
  };
}
