/**
 * MCP tasks (revision 2025-11-25) on transcription jobs, with the SDK's own Client: a
 * task-augmented `transcribe` answers a task at once and its result is the synchronous tool's
 * transcript; the task is the REST job; tasks/get, tasks/list and tasks/cancel see only the
 * caller's jobs; a tool that cannot be a task is -32601; a refusal before the job exists is a
 * JSON-RPC error with the contract's body, nothing charged. Cancels run against a system whose
 * service takes no jobs from its queue, so the job is certainly still queued when canceled.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError, type Task } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync, readdirSync } from 'node:fs';
import { librivoxUtterances } from '../../services/transcription/src/speech-fixtures';
import { callTool, connectMcp, expectValidOutput, outputValidators, type Structured } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

const SPEECH = librivoxUtterances()[0]!;
const audio = readFileSync(SPEECH.wav).toString('base64');
const ERROR_META_KEY = 'dev.murmur/error';

/** Runs a task-augmented call to its end, as a client using tasks does; answers every message. */
async function streamTask(client: Client, name: string, args: Record<string, unknown>) {
  const messages: Array<{ type: string; task?: Task; result?: Structured; error?: unknown }> = [];
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } })) {
    messages.push(m as (typeof messages)[number]);
  }
  return messages;
}

/** The JSON-RPC error a request fails with. */
async function rpcError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected a JSON-RPC error');
}

describe('MCP tasks on transcription jobs', () => {
  let sys: TestSystem;
  const clients: Client[] = [];

  async function newClient(system: TestSystem, email: string) {
    const { key, user } = await system.newUser(email);
    const client = await connectMcp(system.baseUrl, key);
    clients.push(client);
    return { client, key, userId: user.id };
  }
  const usage = async (system: TestSystem, key: string) => (await get(system.baseUrl, '/api/v1/usage', key)).body;

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sys.stop();
  });

  it('declares tasks for tools/call, and lists transcribe as the one tool that may run as a task', async () => {
    const { client } = await newClient(sys, 'task-list-tools@example.com');
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const taskTools = tools.filter((t) => t.execution?.taskSupport === 'optional').map((t) => t.name);
    expect(taskTools).toEqual(['transcribe']);
    expect(tools.filter((t) => t.execution?.taskSupport === 'required')).toEqual([]);
  });

  it('answers a task at once, and its result is the synchronous transcript, charged once; the task is the REST job', async () => {
    const { client, key } = await newClient(sys, 'task-transcribe@example.com');
    const validators = await outputValidators(client);
    const plain = await callTool(client, 'transcribe', { audio_base64: audio, language: 'en' });
    const messages = await streamTask(client, 'transcribe', { audio_base64: audio, language: 'en' });

    const created = messages[0]!;
    expect(created.type).toBe('taskCreated');
    expect(created.task).toMatchObject({ status: 'working', ttl: null, pollInterval: 1000 });
    const taskId = created.task!.taskId;
    expect(taskId).toMatch(/^trn_/);
    const last = messages[messages.length - 1]!;
    expect(last.type).toBe('result');
    expect(last.result!.isError).toBeFalsy();
    expectValidOutput(validators, 'transcribe', last.result!.structuredContent);
    expect(last.result!.structuredContent).toMatchObject({ id: taskId, text: plain.data.text, credits_charged: 1 });
    const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task!.status);
    expect(statuses[statuses.length - 1]).toBe('completed');

    const task = await client.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: 'completed', statusMessage: 'Completed.' });
    const job = await get(sys.baseUrl, `/api/v1/transcriptions/${taskId}`, key);
    expect(job.body).toMatchObject({ id: taskId, status: 'completed', text: plain.data.text });
    const u = await usage(sys, key);
    expect(u.credits).toMatchObject({ monthly_remaining: 98, reserved: 0 });
    expect(u.counters.transcriptions).toBe(2);
    // Asked again, the result is the same.
    const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(again.structuredContent).toEqual(last.result!.structuredContent);
  });

  it('keeps tasks their owner’s: another user’s task id is not found for get, result and cancel, and never listed', async () => {
    const owner = await newClient(sys, 'task-owner@example.com');
    const other = await newClient(sys, 'task-other@example.com');
    const messages = await streamTask(owner.client, 'transcribe', { audio_base64: audio });
    const taskId = messages[0]!.task!.taskId;
    for (const attempt of [
      other.client.experimental.tasks.getTask(taskId),
      other.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      other.client.experimental.tasks.cancelTask(taskId),
    ]) {
      const err = await rpcError(attempt);
      expect(err.code).toBe(-32602);
      expect(err.message).toMatch(/not found/i);
    }
    expect((await other.client.experimental.tasks.listTasks()).tasks).toEqual([]);
    const mine = await owner.client.experimental.tasks.listTasks();
    expect(mine.tasks.map((t) => t.taskId)).toEqual([taskId]);
    // Not a job id at all: not found, without a call to look it up.
    expect((await rpcError(owner.client.experimental.tasks.getTask('../../etc/passwd'))).message).toMatch(/not found/i);
  });

  it('refuses a task for a tool that cannot be one with -32601, and a refused submission with the contract’s error, charging nothing', async () => {
    const { client, key } = await newClient(sys, 'task-refuse@example.com');
    const notTask = await rpcError(client.experimental.tasks.callToolStream({ name: 'list_recordings', arguments: {} }, CallToolResultSchema, { task: {} }).next().then((m) => {
      if (m.value?.type === 'error') throw m.value.error;
      return m;
    }));
    expect(notTask.code).toBe(-32601);

    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{ audio_base64: Buffer.from('this is not audio at all, just text. '.repeat(100)).toString('base64') }, 'unsupported_audio', -32602],
      [{ audio_base64: audio, language: 'english please' }, 'invalid_request', -32602],
      [{ audio_base64: 42 }, 'invalid_request', -32602],
    ];
    for (const [args, code, rpcCode] of cases) {
      const [first] = await streamTask(client, 'transcribe', args);
      expect(first!.type).toBe('error');
      const err = first!.error as McpError;
      expect(err.code).toBe(rpcCode);
      expect((err.data as Structured).error).toMatchObject({ code });
    }
    const u = await usage(sys, key);
    expect(u.credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
    expect((await get(sys.baseUrl, '/api/v1/transcriptions', key)).body.data).toEqual([]);
  });

  describe('with no worker taking jobs', () => {
    let idle: TestSystem;
    beforeAll(async () => {
      idle = await startSystem({ ai: true, jobs: { work: false } });
    });
    afterAll(async () => {
      await idle.stop();
    });

    it('cancels a working task: its credits come back, its result is transcription_canceled, its audio is gone, and a second cancel is refused', async () => {
      const { client, key } = await newClient(idle, 'task-cancel@example.com');
      const res = await client.request(
        { method: 'tools/call', params: { name: 'transcribe', arguments: { audio_base64: audio }, task: {} } },
        CreateTaskResultSchema,
      );
      const taskId = res.task.taskId;
      expect(res.task).toMatchObject({ status: 'working', statusMessage: expect.stringMatching(/^Queued: \d+ s of audio\.$/) });
      expect((await usage(idle, key)).credits.reserved).toBe(1);

      const canceled = await client.experimental.tasks.cancelTask(taskId);
      expect(canceled).toMatchObject({ taskId, status: 'cancelled' });
      expect((await usage(idle, key)).credits).toMatchObject({ monthly_remaining: 100, reserved: 0 });
      expect(readdirSync(idle.audioDir)).toEqual([]);
      expect((await get(idle.baseUrl, `/api/v1/transcriptions/${taskId}`, key)).body.status).toBe('canceled');

      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect((result._meta as Structured)[ERROR_META_KEY].error).toMatchObject({ code: 'transcription_canceled' });
      expect((result._meta as Structured)['io.modelcontextprotocol/related-task']).toEqual({ taskId });

      const again = await rpcError(client.experimental.tasks.cancelTask(taskId));
      expect(again.code).toBe(-32602);
      expect(again.message).toMatch(/terminal status: cancelled/);
    });
  });
});
