/**
 * Billing through MCP: the AI tools refused by billing come back as isError results carrying
 * the contract's code and body (never a protocol error, never a charge), and the 10-a-minute
 * AI limit is one window for REST and MCP together. Billing runs on a manual clock, so "a
 * minute later" is a step of the clock, not a wait.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readFileSync } from 'node:fs';
import { ManualClock } from '@murmur/kit/testing';
import { librivoxUtterances } from '../../services/transcription/src/speech-fixtures';
import { callTool, connectMcp, type Structured } from './support/mcp-client';
import { startSystem, type TestSystem } from './support/system';

const TRANSCRIPT = 'Marcus will send the revised deck to the design team by Friday. We agreed to ship the new payment page in March.';

describe('MCP AI tools and billing', () => {
  let sys: TestSystem;
  const billingClock = new ManualClock(new Date());
  const clients: Client[] = [];
  const audio = readFileSync(librivoxUtterances()[0]!.wav).toString('base64');

  async function newClient(email: string) {
    const { key, user } = await sys.newUser(email);
    const client = await connectMcp(sys.baseUrl, key);
    clients.push(client);
    return { client, key, userId: user.id };
  }

  const restConvert = async (key: string) => {
    const res = await fetch(`${sys.baseUrl}/api/v1/convert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transcript: TRANSCRIPT, kind: 'key_points' }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Structured };
  };

  const usage = async (client: Client) => (await callTool(client, 'get_usage')).data;

  beforeAll(async () => {
    sys = await startSystem({ ai: true, billingClock });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sys.stop();
  });

  it('answers transcribe and convert without credits with an insufficient_tokens result, charging nothing', async () => {
    const { client, userId } = await newClient('mcp-broke@example.com');
    await sys.admin.billing.adjustCredits({ userId, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
    for (const [tool, args] of [
      ['transcribe', { audio_base64: audio }],
      ['convert', { transcript: TRANSCRIPT, kind: 'summary' }],
    ] as const) {
      const res = await callTool(client, tool, args);
      expect(res.isError).toBe(true);
      expect(res.data.error).toMatchObject({ type: 'billing_error', code: 'insufficient_tokens', request_id: expect.stringMatching(/^req_/) });
    }
    const u = await usage(client);
    expect(u.credits).toMatchObject({ monthly_remaining: 0, prepaid_remaining: 0, reserved: 0 });
    expect(u.counters).toMatchObject({ transcriptions: 0, conversions: 0 });
  });

  it('answers at the spending cap with a spending_cap_reached result, and runs once the cap is raised', async () => {
    const { client, userId } = await newClient('mcp-capped@example.com');
    await sys.admin.billing.adjustCredits({ userId, monthlyCredits: 0, prepaidCredits: 100, note: 'test' });
    await sys.admin.billing.setSpendingCap({ userId, capCents: 0 });
    for (const [tool, args] of [
      ['transcribe', { audio_base64: audio }],
      ['convert', { transcript: TRANSCRIPT, kind: 'summary' }],
    ] as const) {
      const res = await callTool(client, tool, args);
      expect(res.isError).toBe(true);
      expect(res.data.error).toMatchObject({ type: 'billing_error', code: 'spending_cap_reached' });
    }
    expect((await usage(client)).credits.prepaid_remaining).toBe(100);

    await sys.admin.billing.setSpendingCap({ userId, capCents: 500 });
    const ok = await callTool(client, 'convert', { transcript: TRANSCRIPT, kind: 'summary' });
    expect(ok.isError).toBe(false);
    const u = await usage(client);
    expect(u.credits.prepaid_remaining).toBe(99);
    expect(u.spending.spent_cents).toBe(1);
  });

  it('shares one 10-a-minute window between REST and MCP: 6 REST + 4 MCP pass, the 11th is refused on both, and a minute later both pass', async () => {
    const { client, key } = await newClient('mcp-rate@example.com');
    for (let i = 0; i < 6; i++) expect((await restConvert(key)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await callTool(client, 'convert', { transcript: TRANSCRIPT, kind: 'key_points' })).isError).toBe(false);

    const rest = await restConvert(key);
    expect(rest.status).toBe(429);
    expect(rest.body.error.code).toBe('rate_limit_exceeded');
    expect(rest.headers.get('ratelimit-remaining')).toBe('0');
    for (const [tool, args] of [
      ['convert', { transcript: TRANSCRIPT, kind: 'key_points' }],
      ['transcribe', { audio_base64: audio }],
    ] as const) {
      const res = await callTool(client, tool, args);
      expect(res.isError).toBe(true);
      expect(res.data.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    }
    const u = await usage(client);
    expect(u.rate_limit).toMatchObject({ limit: 10, remaining: 0 });
    expect(u.counters).toMatchObject({ conversions: 10, transcriptions: 0 });

    billingClock.advance(60_000);
    expect((await callTool(client, 'convert', { transcript: TRANSCRIPT, kind: 'key_points' })).isError).toBe(false);
    expect((await restConvert(key)).status).toBe(200);
    expect((await usage(client)).rate_limit.remaining).toBe(8);
  });
});
