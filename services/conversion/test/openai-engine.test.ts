/**
 * The openai engine against a local server speaking the chat-completions API, through the
 * real conversion, billing and library services: structured answers rendered like every
 * engine's, and every way the endpoint can fail answered with conversion_failed and the
 * credits returned.
 */
import { conversion } from '@murmur/proto';
import { EngineError, OpenAiEngine, parseCsv } from '../src/index';
import { startFakeOpenAi, type FakeOpenAi, type Reply } from './support/fake-openai';
import { PRODUCT_SYNC } from './support/fixtures';
import { convertRequest, failure, newUser, startHarness, transcriptSource, type Harness } from './support/harness';

/** The engine's own request timeout: short, so the hang case ends quickly. */
const TIMEOUT_MS = 400;
/**
 * The service's limit on one conversion, out of reach on purpose: a hanging endpoint can then
 * only end through the engine's own timeout, and a hang of the engine is caught by jest's.
 */
const SERVICE_TIMEOUT_MS = 600_000;

let h: Harness;
let api: FakeOpenAi;

beforeAll(async () => {
  [h, api] = await Promise.all([startHarness({ engineTimeoutMs: SERVICE_TIMEOUT_MS }), startFakeOpenAi()]);
  h.engine.current = new OpenAiEngine({ baseUrl: api.baseUrl, apiKey: 'sk-test-key', model: 'test-model', timeoutMs: TIMEOUT_MS });
});
afterAll(async () => {
  await api?.close();
  await h?.stop();
});

const usage = async (userId: string) => (await h.billing.getUsage({ userId })).usage!;

function convert(userId: string, kind: string, fields: Partial<conversion.ConvertRequest> = {}) {
  return h.conversion.convert(convertRequest({ userId, source: transcriptSource(PRODUCT_SYNC.text), kind, referenceTime: PRODUCT_SYNC.recordedAt, ...fields }));
}

describe('a structured answer', () => {
  it('is asked for with json_schema, the key, the model and the reference date, and rendered like any engine', async () => {
    api.reply = {
      kind: 'content',
      content: JSON.stringify({
        items: [
          { owner: 'Dana', task: 'Send the updated invite mocks to Marco', due: 'Friday' },
          { owner: 'Marco', task: 'Merge the sync fix', due: '2026-01-15' },
          { owner: 'Team', task: 'Decide who is on call', due: '' },
        ],
      }),
    };
    const userId = newUser();
    const r = await convert(userId, 'action_items');
    expect(r).toMatchObject({ engine: 'openai', kind: 'action_items', format: conversion.OutputFormat.OUTPUT_FORMAT_MARKDOWN });
    expect(r.content).toBe(
      '## Action items\n\n' +
        '- [ ] **Dana**: Send the updated invite mocks to Marco (due Fri 2026-01-16)\n' +
        '- [ ] **Marco**: Merge the sync fix (due Thu 2026-01-15)\n' +
        '- [ ] **Team**: Decide who is on call\n',
    );
    const seen = api.requests[api.requests.length - 1]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe('Bearer sk-test-key');
    expect(seen.body.model).toBe('test-model');
    expect(seen.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'murmur_action_items', strict: true } });
    expect(JSON.stringify(seen.body.response_format.json_schema.schema)).not.toContain('maxLength');
    expect(seen.body.response_format.json_schema.schema).toMatchObject({ type: 'object', required: ['items'], additionalProperties: false });
    expect(seen.body.messages[0]!.content).toContain('Tue 2026-01-13');
    expect(seen.body.messages[1]!.content).toContain('Dana will send the updated invite mocks to Marco by Friday');
    const after = await usage(userId);
    expect(after).toMatchObject({ conversions: 1, creditsReserved: 0, creditsUsed: r.creditsCharged });
  });

  it('renders a spreadsheet answer as CSV, padding short rows to the columns', async () => {
    api.reply = {
      kind: 'content',
      content: JSON.stringify({ title: 'Action items', columns: ['Owner', 'Task', 'Due'], rows: [['Dana', 'Send mocks, "v2"', '2026-01-16'], ['Team', 'Decide on call']] }),
    };
    const r = await convert(newUser(), 'spreadsheet', { outputFormat: conversion.OutputFormat.OUTPUT_FORMAT_PLAIN });
    expect(r.content).toBe('Owner,Task,Due\r\nDana,"Send mocks, ""v2""",2026-01-16\r\nTeam,Decide on call,\r\n');
    expect(parseCsv(r.content)).toEqual([['Owner', 'Task', 'Due'], ['Dana', 'Send mocks, "v2"', '2026-01-16'], ['Team', 'Decide on call', '']]);
  });

  it('passes the instructions to the model and honours "bullets" for a summary', async () => {
    api.reply = { kind: 'content', content: JSON.stringify({ title: 'Shared folders sync', sentences: ['The beta has 412 teams.', 'Launch stays on the 27th.'] }) };
    const r = await convert(newUser(), 'summary', { instructions: 'Two bullets for the exec team' });
    expect(r.content).toBe('## Shared folders sync\n\n- The beta has 412 teams.\n- Launch stays on the 27th.\n');
    expect(api.requests[api.requests.length - 1]!.body.messages[0]!.content).toContain('Two bullets for the exec team');
  });
});

describe('a failing endpoint', () => {
  const cases: [string, Reply][] = [
    ['answers HTTP 500', { kind: 'status', status: 500 }],
    ['answers HTTP 503 with an HTML page', { kind: 'status', status: 503, body: '<html>Service Unavailable</html>' }],
    ['answers HTTP 401 (a wrong key)', { kind: 'status', status: 401 }],
    ['does not answer within the timeout', { kind: 'hang' }],
    ['answers a body that is not JSON', { kind: 'raw', body: '{"choices": [' }],
    ['answers without choices', { kind: 'raw', body: '{"object":"chat.completion"}' }],
    ['answers content that is not JSON', { kind: 'content', content: 'Sure! Here are the action items: 1. Dana…' }],
    ['answers JSON that violates the schema', { kind: 'content', content: JSON.stringify({ items: 'Dana sends mocks' }) }],
    ['answers JSON with a field of the wrong type', { kind: 'content', content: JSON.stringify({ items: [{ owner: 'Dana', task: 42, due: '' }] }) }],
    ['refuses', { kind: 'refusal', refusal: 'I cannot help with that.' }],
    ['runs out of tokens mid-answer', { kind: 'content', content: '{"items": [{"owner": "Da', finishReason: 'length' }],
  ];

  it.each(cases)('→ conversion_failed with the credits released when it %s', async (_name, reply) => {
    api.reply = reply;
    const userId = newUser();
    const before = await usage(userId);
    const err = await failure(convert(userId, 'action_items'));
    expect(err.code).toBe('conversion_failed');
    expect(await usage(userId)).toMatchObject({
      monthlyCreditsRemaining: before.monthlyCreditsRemaining,
      creditsReserved: 0,
      creditsUsed: 0,
      conversions: 0,
    });
  });

  it('gives up a silent endpoint after its own timeout, with that reason', async () => {
    api.reply = { kind: 'hang' };
    const engine = new OpenAiEngine({ baseUrl: api.baseUrl, model: 'test-model', timeoutMs: TIMEOUT_MS });
    const seen = api.requests.length;
    const err = await engine
      .convert({ transcript: PRODUCT_SYNC.text, kind: 'summary', instructions: '', referenceTime: PRODUCT_SYNC.recordedAt, signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as Error).message).toBe(`openai endpoint: no answer within ${TIMEOUT_MS} ms`);
    expect(api.requests.length).toBe(seen + 1);
  });

  it('→ conversion_failed when a summary comes back empty', async () => {
    api.reply = { kind: 'content', content: JSON.stringify({ title: 'Empty', sentences: [' ', ''] }) };
    const err = await failure(convert(newUser(), 'summary'));
    expect(err.code).toBe('conversion_failed');
  });

  it('→ conversion_failed when nothing listens at the base URL', async () => {
    h.engine.current = new OpenAiEngine({ baseUrl: 'http://127.0.0.1:9/v1', model: 'test-model', timeoutMs: TIMEOUT_MS });
    try {
      const userId = newUser();
      const err = await failure(convert(userId, 'email'));
      expect(err.code).toBe('conversion_failed');
      expect((await usage(userId)).creditsReserved).toBe(0);
    } finally {
      h.engine.current = new OpenAiEngine({ baseUrl: api.baseUrl, apiKey: 'sk-test-key', model: 'test-model', timeoutMs: TIMEOUT_MS });
    }
  });
});
