/**
 * Convert over real gRPC against the real billing and library services (real Postgres when
 * DATABASE_URL is set, embedded PGlite otherwise), with the local engine: every kind in both
 * formats on long transcripts with their facts checked, recordings, charging, idempotency,
 * validation before any charge, and engine failures returning the credits.
 */
import { billing, conversion, library } from '@murmur/proto';
import { countCharacters, EngineError, KIND_NAMES, LocalEngine, parseCsv, type Artifact, type ConversionEngine, type EngineInput } from '../src/index';
import { withWeekday } from '../src/nlp/dates';
import { FIXTURES, INCIDENT_REVIEW, PRODUCT_SYNC, type Fixture } from './support/fixtures';
import { conversionFingerprint } from '../src/service';
import { convertRequest, failure, newUser, recordingSource, startHarness, transcriptSource, type Harness } from './support/harness';
import { parseMarkdownTable, unescapeMarkdown } from './support/markdown';

const PLAIN = conversion.OutputFormat.OUTPUT_FORMAT_PLAIN;
const MARKDOWN = conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ engineTimeoutMs: 1_500 });
});
afterAll(async () => {
  await h?.stop();
});

const usage = async (userId: string) => (await h.billing.getUsage({ userId })).usage!;
const creditsFor = (text: string) => Math.ceil(countCharacters(text) / 1000);

async function convert(userId: string, f: Fixture, kind: string, outputFormat: conversion.OutputFormat, extra: Partial<conversion.ConvertRequest> = {}) {
  return h.conversion.convert(convertRequest({ userId, source: transcriptSource(f.text), kind, outputFormat, referenceTime: f.recordedAt, ...extra }));
}

/** Words only, hesitations out: how a quote and its source are compared. */
const words = (s: string) => ` ${s.toLowerCase().replace(/\b(?:um+|uh+|erm|you know)\b/g, ' ').replace(/[^a-z0-9]+/g, ' ').trim()} `;

/** True when `sentence` is quoted from `text` (tidying drops a leading "So," and hesitations). */
function quotedFrom(sentence: string, text: string): boolean {
  const core = words(sentence).trim().split(' ').slice(1).join(' ');
  return core.length < 8 || words(text).includes(` ${core} `);
}

describe.each(FIXTURES.map((f) => [f.name, f] as const))('%s: every kind in both formats', (_name, f) => {
  const results = new Map<string, conversion.ConvertResponse>();

  beforeAll(async () => {
    for (const outputFormat of [MARKDOWN, PLAIN]) {
      const userId = newUser();
      for (const kind of KIND_NAMES) results.set(`${kind}/${outputFormat}`, await convert(userId, f, kind, outputFormat));
    }
  });

  const md = (kind: string) => results.get(`${kind}/${MARKDOWN}`)!;
  const plain = (kind: string) => results.get(`${kind}/${PLAIN}`)!;
  const due = (iso: string) => (iso ? ` (due ${withWeekday(iso)})` : '');

  it('answers every kind with the local engine, the format asked for, and the price of the transcript', () => {
    for (const kind of KIND_NAMES) {
      for (const [r, format] of [[md(kind), MARKDOWN], [plain(kind), PLAIN]] as const) {
        expect(r).toMatchObject({ kind, format, engine: 'local', recordingId: '', creditsCharged: creditsFor(f.text) });
        expect(r.id).toMatch(/^art_[0-9a-v]+$/);
        expect(r.content.trim().length).toBeGreaterThan(40);
      }
    }
  });

  it('lists every action item with its owner and due date, in order', () => {
    const mdLines = md('action_items').content.split('\n').filter((l) => l.startsWith('- '));
    expect(mdLines).toEqual(f.actions.map((a) => `- [ ] **${a.owner}**: ${a.task}${due(a.due)}`));
    const plainLines = plain('action_items').content.split('\n').filter((l) => l.startsWith('- '));
    expect(plainLines).toEqual(f.actions.map((a) => `- ${a.owner}: ${a.task}${due(a.due)}`));
  });

  it('writes the spreadsheet as CSV that parses back to the action items, and as a well-formed Markdown table', () => {
    const rows = f.actions.map((a) => [a.owner, a.task, a.due]);
    const csv = plain('spreadsheet').content;
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(parseCsv(csv)).toEqual([['Owner', 'Task', 'Due'], ...rows]);
    const table = parseMarkdownTable(md('spreadsheet').content);
    expect(table.header).toEqual(['Owner', 'Task', 'Due']);
    expect(table.rows).toEqual(rows);
  });

  it('drafts an email with subject, greeting, key points, every action item and a sign-off', () => {
    for (const [r, subject] of [[md('email'), '**Subject:** Recap'], [plain('email'), 'Subject: Recap']] as const) {
      const text = unescapeMarkdown(r.content);
      expect(text.startsWith(subject)).toBe(true);
      expect(text).toMatch(/\n\nHi [A-Za-z]+,\n\n/);
      for (const a of f.actions) expect(text).toContain(`${a.owner}${r === md('email') ? '**' : ''}: ${a.task}${due(a.due)}`);
      expect(text).toMatch(/Best,\s*\n\[Your name\]\n$/);
    }
  });

  it('writes meeting notes with the date, the people, the decisions and the action items', () => {
    for (const r of [md('meeting_notes'), plain('meeting_notes')]) {
      const text = unescapeMarkdown(r.content);
      expect(text).toContain(withWeekday(f.recordedAt.toISOString().slice(0, 10)));
      if (f.attendees.length > 0) expect(text).toMatch(new RegExp(`Attendees:\\**\\s*${f.attendees.join(', ')}\\n`));
      expect(text).toMatch(new RegExp(`(?:Also|People) mentioned:\\**\\s*${f.mentioned.join(', ')}\\n`));
      const decisions = text.slice(text.indexOf('Decisions'), text.lastIndexOf('Action items'));
      for (const d of f.decisions) expect(decisions).toContain(d);
      if (f.decisions.length === 0) expect(decisions).toContain('No decisions were recorded.');
      for (const a of f.actions) expect(text).toContain(`${a.task}${due(a.due)}`);
    }
    expect(md('meeting_notes').content).toMatch(/^## Meeting notes/);
    expect(md('meeting_notes').content).toContain('\n### Decisions\n');
  });

  it('summarises with sentences quoted from the transcript, never an action-item recap, then names the next steps', () => {
    for (const r of [md('summary'), plain('summary')]) {
      const [said, next] = unescapeMarkdown(r.content).split(/\n\n(?:\*\*Next steps\*\*\n\n|Next steps:\n)/);
      // What happens next is the action items, each as the action_items kind lists it.
      for (const line of (next ?? '').split('\n').filter(Boolean)) {
        const [, owner, task] = /^- (?:\*\*)?([^:*]+)(?:\*\*)?: (.+?)(?: \(due [^)]+\))?$/.exec(line)!;
        expect(unescapeMarkdown(md('action_items').content)).toContain(`**${owner}**: ${task}`);
      }
      const body = said!.split('\n\n').slice(1).join(' ').trim();
      const sentences = body.split(/(?<=[.!?])\s+(?=[A-Z0-9])/).filter(Boolean);
      expect(sentences.length).toBeGreaterThanOrEqual(4);
      for (const s of sentences) expect([s, quotedFrom(s, f.text)]).toEqual([s, true]);
    }
    expect(md('summary').content.startsWith('## Summary\n\n')).toBe(true);
    expect(plain('summary').content.startsWith('Summary\n\n')).toBe(true);
    expect(plain('summary').content).not.toMatch(/[#*]/);
  });

  it('lists key points as bullets quoted from the transcript', () => {
    const bullets = md('key_points').content.split('\n').filter((l) => l.startsWith('- '));
    expect(bullets.length).toBeGreaterThanOrEqual(3);
    expect(bullets.length).toBeLessThanOrEqual(15);
    for (const b of bullets) expect([b, quotedFrom(unescapeMarkdown(b.slice(2)), f.text)]).toEqual([b, true]);
  });
});

describe('charging', () => {
  it('limits a direct gRPC caller (no gateway admission) like the public API: the 11th call in a minute is refused, uncharged', async () => {
    const userId = newUser();
    const short = 'Marcus will send the deck by Friday.';
    const results = await Promise.allSettled(
      Array.from({ length: 11 }, () => h.conversion.convert(convertRequest({ userId, source: transcriptSource(short), kind: 'key_points' }))),
    );
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as { code: string });
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(refused.map((e) => e.code)).toEqual(['rate_limit_exceeded']);
    expect(await usage(userId)).toMatchObject({ conversions: 10, creditsUsed: 10, creditsReserved: 0 });
  });

  it('charges ceil(characters / 1000) × the plan rate, visible in GetUsage, and counts the conversion', async () => {
    const userId = newUser();
    const before = await usage(userId);
    const rate = before.plan!.conversionCreditsPer1kChars;
    const r = await convert(userId, PRODUCT_SYNC, 'summary', MARKDOWN);
    const after = await usage(userId);
    expect(r.creditsCharged).toBe(Math.ceil(countCharacters(PRODUCT_SYNC.text) / 1000) * rate);
    expect(before.monthlyCreditsRemaining - after.monthlyCreditsRemaining).toBe(r.creditsCharged);
    expect(after).toMatchObject({ creditsReserved: 0, conversions: 1, creditsUsed: r.creditsCharged });
  });

  it('converts a transcript with control characters (a NUL cannot reach Postgres) and stores it on the recording', async () => {
    const userId = newUser();
    const text = 'Dana will send the\u0000 mocks by Friday.\u0007 We agreed to ship.';
    const { recording } = await h.library.createRecording({
      ownerId: userId, title: 'ctl', folderId: '', durationSeconds: 5, transcript: { text: text.replace(/\u0000/g, ''), language: 'en', segments: [] }, createdAt: undefined,
      recordingId: '',
    });
    const inline = await h.conversion.convert(convertRequest({ userId, source: transcriptSource(text), kind: 'action_items', referenceTime: PRODUCT_SYNC.recordedAt }));
    expect(inline.content).toContain('**Dana**: Send the mocks (due Fri 2026-01-16)');
    const stored = await h.conversion.convert(convertRequest({ userId, source: recordingSource(recording!.id), kind: 'key_points' }));
    expect(stored.content).not.toMatch(/[\u0000-\u0008]/);
  });

  it('counts characters, not UTF-16 units: 1,000 emoji cost one credit', async () => {
    const userId = newUser();
    const text = `${'\u{1F600}'.repeat(993)} Notes.`;
    expect(text.length).toBe(1993);
    expect(countCharacters(text)).toBe(1000);
    const r = await h.conversion.convert(convertRequest({ userId, source: transcriptSource(text), kind: 'key_points' }));
    expect(r.creditsCharged).toBe(1);
  });

  it('never runs the engine again for a replayed key: the same request is refused as completed, charged once', async () => {
    const userId = newUser();
    const key = 'idem-replay-1';
    await convert(userId, INCIDENT_REVIEW, 'action_items', MARKDOWN, { idempotencyKey: key });
    const afterFirst = await usage(userId);
    const engineCalls = h.engine.calls.length;
    const err = await failure(convert(userId, INCIDENT_REVIEW, 'action_items', MARKDOWN, { idempotencyKey: key }));
    expect(err).toMatchObject({ code: 'idempotency_conflict', param: 'idempotency_key' });
    expect(err.message).toMatch(/completed and was charged/);
    expect(h.engine.calls.length).toBe(engineCalls);
    expect(await usage(userId)).toEqual(afterFirst);
  });

  it.each([
    ['another transcript', { source: transcriptSource(`${INCIDENT_REVIEW.text} And one more thing.`) }],
    ['another kind', { kind: 'summary' }],
    ['other instructions', { instructions: 'Only the owners.' }],
  ])('refuses a key reused with %s (idempotency_conflict), running and charging nothing', async (_name, other) => {
    const userId = newUser();
    const key = 'idem-reused-1';
    await convert(userId, INCIDENT_REVIEW, 'action_items', MARKDOWN, { idempotencyKey: key });
    const afterFirst = await usage(userId);
    const engineCalls = h.engine.calls.length;
    const err = await failure(convert(userId, INCIDENT_REVIEW, 'action_items', MARKDOWN, { idempotencyKey: key, ...other }));
    expect(err).toMatchObject({ code: 'idempotency_conflict', param: 'idempotency_key' });
    expect(err.message).toMatch(/other parameters/);
    expect(h.engine.calls.length).toBe(engineCalls);
    expect(await usage(userId)).toEqual(afterFirst);
  });

  it('refuses a key while its first conversion still holds its credits, running nothing', async () => {
    const userId = newUser();
    const request = convertRequest({ userId, source: transcriptSource(INCIDENT_REVIEW.text), kind: 'summary', idempotencyKey: 'idem-running-1' });
    // The first call's hold, as billing keeps it while that call runs (same key, same request).
    await h.billing.reserve({
      userId, operation: billing.Operation.OPERATION_CONVERT, credits: 0, idempotencyKey: 'idem-running-1', admissionId: '', audioSeconds: 0,
      transcriptChars: countCharacters(INCIDENT_REVIEW.text), holdSeconds: 60, requestFingerprint: conversionFingerprint(request, 'summary', 'markdown'),
    });
    const engineCalls = h.engine.calls.length;
    expect(await failure(h.conversion.convert(request))).toMatchObject({ code: 'idempotency_conflict', message: expect.stringMatching(/still running/) });
    expect(h.engine.calls.length).toBe(engineCalls);
  });

  it('refuses with insufficient_tokens when the balance is short, and reserves nothing', async () => {
    const userId = newUser();
    await h.billing.adjustCredits({ userId, monthlyCredits: 2, note: 'test' });
    const err = await failure(convert(userId, PRODUCT_SYNC, 'summary', MARKDOWN));
    expect(err.code).toBe('insufficient_tokens');
    expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 2, creditsReserved: 0, conversions: 0 });
  });

  it('takes the rate-limit slot at the reservation without an admission and answers the window; with one, takes none', async () => {
    const userId = newUser();
    const admitted = convertRequest({ userId, source: transcriptSource(PRODUCT_SYNC.text), kind: 'summary' });
    const first = await h.conversion.convert(admitted);
    expect(first.rateLimit).toEqual({ limit: 10, remaining: 9, windowSeconds: 60, resetSeconds: 60 });
    const { admissionId, rateLimit } = await h.billing.admitAiRequest({ userId, operation: billing.Operation.OPERATION_CONVERT });
    expect(rateLimit!.remaining).toBe(8);
    const second = await h.conversion.convert({ ...admitted, admissionId, idempotencyKey: 'admitted-second' });
    expect(second.rateLimit).toBeUndefined();
    expect((await h.billing.getRateLimit({ userId })).rateLimit!.remaining).toBe(8);
    expect((await usage(userId)).conversions).toBe(2);
  });
});

describe('recordings', () => {
  async function createRecording(ownerId: string, f: Fixture): Promise<library.Recording> {
    const { recording } = await h.library.createRecording({
      ownerId,
      title: f.name,
      folderId: '',
      durationSeconds: 600,
      transcript: { text: f.text, language: 'en', segments: [] },
      createdAt: f.recordedAt,
      recordingId: '',
    });
    return recording!;
  }

  it('reads the transcript of the caller\'s recording, dates against its creation time, and stores the artifact on it', async () => {
    const userId = newUser();
    const rec = await createRecording(userId, PRODUCT_SYNC);
    const r = await h.conversion.convert(convertRequest({ userId, source: recordingSource(rec.id), kind: 'spreadsheet', outputFormat: PLAIN }));
    expect(r.recordingId).toBe(rec.id);
    expect(parseCsv(r.content).slice(1)).toEqual(PRODUCT_SYNC.actions.map((a) => [a.owner, a.task, a.due]));
    const { recording } = await h.library.getRecording({ ownerId: userId, recordingId: rec.id });
    expect(recording!.artifacts).toEqual([
      expect.objectContaining({ id: r.id, recordingId: rec.id, kind: 'spreadsheet', format: library.ArtifactFormat.ARTIFACT_FORMAT_PLAIN, content: r.content, creditsCharged: r.creditsCharged }),
    ]);
    expect(recording!.artifacts[0]!.createdAt).toEqual(r.createdAt);
  });

  it('replays a committed key on a recording with the stored artifact, not a second copy', async () => {
    const userId = newUser();
    const rec = await createRecording(userId, INCIDENT_REVIEW);
    const request = convertRequest({ userId, source: recordingSource(rec.id), kind: 'email', idempotencyKey: 'idem-recording-1' });
    const first = await h.conversion.convert(request);
    const second = await h.conversion.convert(request);
    // The first call took its rate-limit slot at the reservation and says so; the replay took none.
    expect(first.rateLimit).toEqual({ limit: 10, remaining: 9, windowSeconds: 60, resetSeconds: 60 });
    expect(second).toEqual({ ...first, rateLimit: undefined });
    const { recording } = await h.library.getRecording({ ownerId: userId, recordingId: rec.id });
    expect(recording!.artifacts.map((a) => a.id)).toEqual([first.id]);
    expect((await usage(userId)).conversions).toBe(1);
  });

  it('reads unpunctuated speech by its segments, and charges the transcript as stored', async () => {
    const userId = newUser();
    const sentences = INCIDENT_REVIEW.text.split(/(?<=[.?!])\s+/).map((x) => x.toLowerCase().replace(/[.,?!;:]/g, '').trim()).filter(Boolean);
    const segments = sentences.map((text, i) => ({ startSeconds: i * 5, endSeconds: i * 5 + 5, text }));
    const text = segments.map((x) => x.text).join(' ');
    const { recording } = await h.library.createRecording({
      ownerId: userId, title: 'incident review', folderId: '', durationSeconds: segments.length * 5,
      transcript: { text, language: 'en', segments }, createdAt: INCIDENT_REVIEW.recordedAt,
      recordingId: '',
    });
    const r = await h.conversion.convert(convertRequest({ userId, source: recordingSource(recording!.id), kind: 'action_items' }));
    expect(h.engine.calls[h.engine.calls.length - 1]!.transcript).toBe(sentences.join('\n\n'));
    expect(r.creditsCharged).toBe(creditsFor(text));
    expect(r.content).toContain('- [ ] **Chloe**: Add an alert on worker restarts (due Fri 2026-03-13)');
    expect(r.content).toContain('- [ ] **Ravi**: Write the design for retry backoff (due Fri 2026-03-20)');
  });

  it('answers not_found for another user\'s recording and charges nothing', async () => {
    const owner = newUser();
    const other = newUser();
    const rec = await createRecording(owner, PRODUCT_SYNC);
    const before = await usage(other);
    const err = await failure(h.conversion.convert(convertRequest({ userId: other, source: recordingSource(rec.id), kind: 'summary' })));
    expect(err).toMatchObject({ code: 'not_found', param: 'recording_id' });
    expect(await usage(other)).toEqual(before);
    const { recording } = await h.library.getRecording({ ownerId: owner, recordingId: rec.id });
    expect(recording!.artifacts).toEqual([]);
  });

  it('answers not_found for a malformed or unknown recording id', async () => {
    const userId = newUser();
    for (const id of ['nope', 'rec_0000000000000000000000000']) {
      const err = await failure(h.conversion.convert(convertRequest({ userId, source: recordingSource(id), kind: 'summary' })));
      expect(err.code).toBe('not_found');
    }
  });

  it('refuses a recording without a transcript before charging', async () => {
    const userId = newUser();
    const { recording } = await h.library.createRecording({ ownerId: userId, title: 'silent', folderId: '', durationSeconds: 3, transcript: undefined, createdAt: undefined, recordingId: '' });
    const err = await failure(h.conversion.convert(convertRequest({ userId, source: recordingSource(recording!.id), kind: 'summary' })));
    expect(err).toMatchObject({ code: 'invalid_request', param: 'recording_id' });
    expect((await usage(userId)).creditsUsed).toBe(0);
  });
});

describe('validation before any charge', () => {
  const cases: [string, Partial<conversion.ConvertRequest>, string, RegExp][] = [
    ['an unknown kind, listing the valid ones', { kind: 'poem' }, 'kind', /Unknown kind "poem"\. Use one of: summary, email, spreadsheet, action_items, meeting_notes, key_points\./],
    ['an empty kind', { kind: '' }, 'kind', /kind is required/],
    ['an empty transcript', { source: transcriptSource('') }, 'transcript', /empty/],
    ['a whitespace transcript', { source: transcriptSource(' \n\t ') }, 'transcript', /empty/],
    ['a transcript without a single word', { source: transcriptSource('... ?! \u{1F600}') }, 'transcript', /no words/],
    ['no transcript and no recording', { source: undefined }, 'transcript', /recording_id/],
    ['an output format this release does not know', { outputFormat: 7 as conversion.OutputFormat }, 'output_format', /markdown.*plain/],
    ['instructions over 2,000 characters', { instructions: 'x'.repeat(2_001) }, 'instructions', /2000/],
    ['an idempotency key over 255 characters', { idempotencyKey: 'k'.repeat(256) }, 'idempotency_key', /255/],
  ];

  it.each(cases)('refuses %s with invalid_request', async (_name, fields, param, message) => {
    const userId = newUser();
    const err = await failure(h.conversion.convert(convertRequest({ userId, source: transcriptSource('We agreed to ship on Friday.'), ...fields })));
    expect(err).toMatchObject({ code: 'invalid_request', param });
    expect(err.message).toMatch(message);
    expect(await usage(userId)).toMatchObject({ creditsUsed: 0, creditsReserved: 0, monthlyCreditsRemaining: 100 });
  });

  it("refuses a transcript over the plan's max_transcript_chars with invalid_request naming the limit", async () => {
    const userId = newUser();
    const max = (await usage(userId)).plan!.maxTranscriptChars;
    const text = 'Priya will send the deck by Friday. '.repeat(Math.ceil((max + 1) / 36));
    const err = await failure(h.conversion.convert(convertRequest({ userId, source: transcriptSource(text), kind: 'summary' })));
    expect(err).toMatchObject({ code: 'invalid_request', param: 'transcript', meta: { max_transcript_chars: String(max) } });
    expect(err.message).toContain(max.toLocaleString('en-US'));
    expect(await usage(userId)).toMatchObject({ creditsUsed: 0, creditsReserved: 0, monthlyCreditsRemaining: 100 });
  });

  it('accepts a transcript of exactly the limit', async () => {
    const userId = newUser();
    await h.billing.adjustCredits({ userId, monthlyCredits: 1_000, note: 'test' });
    const max = (await usage(userId)).plan!.maxTranscriptChars;
    const sentence = 'Priya will send the deck by Friday. ';
    const text = sentence.repeat(Math.floor(max / sentence.length)).padEnd(max, '.');
    expect(countCharacters(text)).toBe(max);
    const r = await h.conversion.convert(convertRequest({ userId, source: transcriptSource(text), kind: 'key_points' }));
    expect(r.creditsCharged).toBe(Math.ceil(max / 1000));
  });
});

describe('engine failures return the credits', () => {
  afterEach(() => {
    h.engine.current = new LocalEngine();
  });

  const failing = (convert: (input: EngineInput) => Promise<Artifact>): ConversionEngine => ({ name: 'test', convert, answer: () => Promise.reject(new EngineError('not asked here')) });

  it.each([
    ['throws', failing(async () => Promise.reject(new EngineError('model crashed')))],
    ['answers another kind than asked', failing(async () => ({ kind: 'key_points', title: 'Key points', points: ['Something else.'] }))],
    ['never answers (the engine timeout passes)', failing(() => new Promise<Artifact>(() => undefined))],
  ])('answers conversion_failed when the engine %s, and releases the reservation', async (_name, engine) => {
    h.engine.current = engine;
    const userId = newUser();
    const before = await usage(userId);
    const err = await failure(convert(userId, PRODUCT_SYNC, 'summary', MARKDOWN));
    expect(err.code).toBe('conversion_failed');
    expect(err.message).toMatch(/credits were returned/);
    const after = await usage(userId);
    expect(after).toMatchObject({ monthlyCreditsRemaining: before.monthlyCreditsRemaining, creditsReserved: 0, creditsUsed: 0, conversions: 0 });
  });

  it('lets a key whose first conversion failed (its credits are back) run again, charged once for the conversion it delivers', async () => {
    h.engine.current = failing(async () => Promise.reject(new EngineError('boom')));
    const userId = newUser();
    await failure(convert(userId, PRODUCT_SYNC, 'summary', MARKDOWN, { idempotencyKey: 'idem-failed' }));
    expect(await usage(userId)).toMatchObject({ creditsUsed: 0, creditsReserved: 0 });
    h.engine.current = new LocalEngine();
    const retry = await convert(userId, PRODUCT_SYNC, 'summary', MARKDOWN, { idempotencyKey: 'idem-failed' });
    expect(await usage(userId)).toMatchObject({ creditsUsed: retry.creditsCharged, conversions: 1, creditsReserved: 0 });
  });
});

describe('ListKinds', () => {
  it('lists the six kinds with descriptions', async () => {
    const { kinds } = await h.conversion.listKinds({});
    expect(kinds.map((k) => k.name)).toEqual(['summary', 'email', 'spreadsheet', 'action_items', 'meeting_notes', 'key_points']);
    for (const k of kinds) expect(k.description.length).toBeGreaterThan(20);
  });
});
