/**
 * ConversionService.Answer (issue 34, `ask`) against real billing and library services: the
 * local engine's extractive answer cites the passages it quotes; an OpenAI-compatible endpoint's
 * answer is asked for with the numbered passages and its citations checked; every failure
 * releases the hold; a question that matches nothing costs nothing; an Idempotency-Key never
 * buys a second answer; another user's passages are never read.
 */
import { conversion, library } from '@murmur/proto';
import { EngineError, extractiveAnswer, LocalEngine, modelAnswer, OpenAiEngine, questionQuery } from '../src/index';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai';
import { failure, newUser, startHarness, type Harness } from './support/harness';

let h: Harness;
let api: FakeOpenAi;

beforeAll(async () => {
  [h, api] = await Promise.all([startHarness({ engineTimeoutMs: 5_000 }), startFakeOpenAi()]);
});
afterAll(async () => {
  await api?.close();
  await h?.stop();
});
afterEach(() => {
  h.engine.current = new LocalEngine();
});

const usage = async (userId: string) => (await h.billing.getUsage({ userId })).usage!;

function ask(userId: string, question: string, fields: Partial<conversion.AnswerRequest> = {}) {
  return h.conversion.answer({
    userId, question, sources: [], folderId: '', recordingId: '', createdAfter: undefined, createdBefore: undefined, idempotencyKey: '', admissionId: '', ...fields,
  });
}

async function meeting(userId: string, title: string, turns: Array<[string, string]>): Promise<string> {
  const speakers = [...new Set(turns.map(([s]) => s))];
  const res = await h.library.createRecording({
    ownerId: userId, recordingId: '', title, folderId: '', durationSeconds: turns.length * 10, createdAt: undefined,
    transcript: {
      text: turns.map(([, t]) => t).join(' '),
      language: 'en',
      segments: turns.map(([speaker, text], i) => ({ startSeconds: i * 10, endSeconds: i * 10 + 10, text, speaker })),
      timeline: { words: undefined, speakers: speakers.map((id) => ({ id, name: id === 'S1' ? 'Priya' : '' })), wordCount: 0 },
    },
  });
  return res.recording!.id;
}

describe('a question as a search', () => {
  it('joins the question’s words with OR and keeps quotes and minus signs out', () => {
    expect(questionQuery('What did we decide about the "pricing page" -- and who owns it?')).toBe('what or did or we or decide or about or the or pricing or page or and or who or owns or it');
    expect(questionQuery('OR or Or')).toBe('');
    expect(questionQuery('x'.repeat(600))).toBe('');
  });
});

describe('the local engine answers extractively', () => {
  it('quotes the sentences that share the question’s words, citing their passages', async () => {
    const userId = newUser();
    await meeting(userId, 'Pricing review', [
      ['S1', 'Welcome everyone to the review.'],
      ['S2', 'We decided the pricing page launches on March 3. Legal signs off first.'],
      ['S1', 'Next we talked about hiring two engineers.'],
    ]);
    const before = await usage(userId);
    const res = await ask(userId, 'When does the pricing page launch?');
    expect(res.mode).toBe(conversion.AnswerMode.ANSWER_MODE_EXTRACTIVE);
    expect(res.engine).toBe('local');
    expect(res.id).toMatch(/^ans_/);
    const pricing = res.passages.find((p) => p.text.includes('pricing page'))!;
    expect(res.answer).toContain('We decided the pricing page launches on March 3.');
    expect(res.answer).toMatch(/\[\d\]/);
    expect(res.citedPassageIds).toContain(pricing.id);
    for (const id of res.citedPassageIds) expect(res.passages.map((p) => p.id)).toContain(id);
    expect(res.creditsCharged).toBeGreaterThan(0);
    const after = await usage(userId);
    expect(after.monthlyCreditsRemaining).toBe(before.monthlyCreditsRemaining - res.creditsCharged);
    expect(after.creditsReserved).toBe(0);
  });

  it('never quotes a word that is not in a passage', () => {
    const passages = [
      { n: 1, title: 'A', text: 'The budget is final. Nothing else.', start: 0, speaker: 'S1' },
      { n: 2, title: 'B', text: 'Unrelated chatter about lunch.', start: 10, speaker: '' },
    ];
    const res = extractiveAnswer({ question: 'Is the budget final?', passages });
    expect(res).toEqual({ answer: 'The budget is final. [1]', citations: [1], mode: 'extractive' });
  });

  it('answers a question that matches nothing so, with nothing reserved or charged', async () => {
    const userId = newUser();
    await meeting(userId, 'Standup', [['S1', 'Yesterday I fixed the login bug.']]);
    const before = await usage(userId);
    const res = await ask(userId, 'What about the zeppelin fleet?');
    expect(res).toMatchObject({ passages: [], citedPassageIds: [], creditsCharged: 0, answer: 'Nothing in your library matches this question.' });
    expect(await usage(userId)).toEqual(before);
  });

  it('reads only the caller’s passages', async () => {
    const alice = newUser();
    const bob = newUser();
    const bobs = await meeting(bob, 'Bob secret', [['S1', 'The merger with Initech closes in June.']]);
    const res = await ask(alice, 'When does the merger with Initech close?');
    expect(res.passages).toEqual([]);
    expect(res.creditsCharged).toBe(0);
    expect((await failure(ask(alice, 'merger?', { recordingId: bobs }))).code).toBe('not_found');
  });
});

describe('refusals before anything is held', () => {
  it.each([
    ['', 'question'],
    ['   ', 'question'],
    ['?!', 'question'],
    ['x'.repeat(1001), 'question'],
    ['what is the', 'question'],
  ])('refuses %j as invalid_request naming %s', async (question, param) => {
    const userId = newUser();
    await meeting(userId, 'Anything', [['S1', 'Something was said here.']]);
    const before = await usage(userId);
    const err = await failure(ask(userId, question));
    expect([err.code, err.param]).toEqual(['invalid_request', param]);
    expect(await usage(userId)).toEqual(before);
  });

  it('refuses a user without credits with insufficient_tokens, charging nothing', async () => {
    const userId = newUser();
    await meeting(userId, 'Plans', [['S1', 'The roadmap has three themes.']]);
    await h.billing.adjustCredits({ userId, monthlyCredits: 0, note: 'test' });
    const err = await failure(ask(userId, 'What are the roadmap themes?'));
    expect(err.code).toBe('insufficient_tokens');
    expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 0, creditsReserved: 0, conversions: 0 });
  });
});

describe('an LLM engine answers generatively', () => {
  beforeEach(() => {
    h.engine.current = new OpenAiEngine({ baseUrl: api.baseUrl, model: 'test-model', timeoutMs: 2_000 });
  });

  it('sends the numbered passages and the question with a JSON schema, and keeps only real citations', async () => {
    const userId = newUser();
    await meeting(userId, 'Pricing review', [['S1', 'We decided the pricing page launches on March 3.'], ['S2', 'Marketing wants a banner.']]);
    api.reply = { kind: 'content', content: JSON.stringify({ answer: 'It launches on March 3 [1], with a banner [7].', citations: [1, 9] }) };
    const res = await ask(userId, 'When does the pricing page launch, and is there a banner?');
    const seen = api.requests[api.requests.length - 1]!.body;
    expect(seen.response_format.json_schema.name).toBe('murmur_answer');
    expect(seen.messages[1]!.content).toMatch(/\[1\] Pricing review \(at 0:00, Priya\): We decided the pricing page launches on March 3\./);
    expect(seen.messages[1]!.content).toContain('Question: When does the pricing page launch, and is there a banner?');
    expect(res.mode).toBe(conversion.AnswerMode.ANSWER_MODE_GENERATIVE);
    expect(res.answer).toBe('It launches on March 3 [1], with a banner.');
    expect(res.citedPassageIds).toEqual([res.passages[0]!.id]);
  });

  it.each([
    ['answers HTTP 500', { kind: 'status', status: 500 } as const],
    ['answers text that is not JSON', { kind: 'content', content: 'It launches in March.' } as const],
    ['answers an empty answer', { kind: 'content', content: JSON.stringify({ answer: ' ', citations: [] }) } as const],
    ['never answers', { kind: 'hang' } as const],
  ])('answers conversion_failed when the endpoint %s, and returns the hold', async (_what, reply) => {
    const userId = newUser();
    await meeting(userId, 'Pricing review', [['S1', 'We decided the pricing page launches on March 3.']]);
    api.reply = reply;
    const before = await usage(userId);
    const err = await failure(ask(userId, 'When does the pricing page launch?'));
    expect(err.code).toBe('conversion_failed');
    const after = await usage(userId);
    expect(after).toMatchObject({ monthlyCreditsRemaining: before.monthlyCreditsRemaining, creditsReserved: 0, creditsUsed: before.creditsUsed });
  }, 20_000);

  it('checks a model’s citations: numbers of passages it was not given are dropped', () => {
    expect(modelAnswer(JSON.stringify({ answer: 'Yes [2] and no [5].', citations: [2, 0, 3] }), 3)).toEqual({ answer: 'Yes [2] and no.', citations: [2, 3], mode: 'generative' });
    expect(() => modelAnswer('{"answer": 3}', 3)).toThrow(EngineError);
  });
});

describe('Idempotency-Key', () => {
  it('never answers twice for one charge: the same key again is a conflict, not a free answer', async () => {
    const userId = newUser();
    await meeting(userId, 'Pricing review', [['S1', 'We decided the pricing page launches on March 3.']]);
    const first = await ask(userId, 'When does the pricing page launch?', { idempotencyKey: 'ask-1' });
    const engineCalls = h.engine.questions.length;
    expect(first.creditsCharged).toBeGreaterThan(0);
    const used = (await usage(userId)).creditsUsed;
    const again = await failure(ask(userId, 'When does the pricing page launch?', { idempotencyKey: 'ask-1' }));
    expect(again.code).toBe('idempotency_conflict');
    const other = await failure(ask(userId, 'Who decided on the pricing page?', { idempotencyKey: 'ask-1' }));
    expect(other.code).toBe('idempotency_conflict');
    expect((await usage(userId)).creditsUsed).toBe(used);
    expect(h.engine.questions.length).toBe(engineCalls);
  });
});

describe('filters', () => {
  it('asks within one recording when recording_id is given', async () => {
    const userId = newUser();
    const a = await meeting(userId, 'Monday', [['S1', 'The budget for Q3 is approved.']]);
    await meeting(userId, 'Tuesday', [['S1', 'The budget for Q4 is still open.']]);
    const res = await ask(userId, 'Is the budget approved?', { recordingId: a });
    expect(res.passages.map((p) => p.sourceId)).toEqual([a]);
    const onlyThreads = await ask(userId, 'Is the budget approved?', { sources: [library.PassageSource.PASSAGE_SOURCE_THOUGHT_THREAD] });
    expect(onlyThreads.passages).toEqual([]);
  });
});
