/**
 * MCP tasks (spec revision 2025-11-25) backed by transcription jobs: a task-augmented
 * `tools/call` of `transcribe` submits a job and answers its task at once; `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` read, wait for, list and cancel the caller's
 * jobs. The task id is the job id (`trn_…`), so a task made over MCP is the same job REST shows,
 * and any gateway replica answers for it: the server keeps no task state of its own (it is
 * stateless), the transcription service's queue is the store. Another user's id is not found.
 */
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type ServerCapabilities, type Task } from '@modelcontextprotocol/sdk/types.js';
import { isErrorCode, MurmurError, toErrorBody } from '@murmur/contract';
import { asPublicError, currentContext, type Logger } from '@murmur/kit';
import * as ops from '../operations';
import { toolError, toolSuccess } from './tool-result';

/** How often a client should poll tasks/get (and how often tasks/result looks while it waits). */
export const TASK_POLL_INTERVAL_MS = 1000;

/** What the server declares: tasks can be listed and canceled, and tools/call can be task-augmented. */
export const TASK_CAPABILITIES: NonNullable<ServerCapabilities['tasks']> = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

type Job = ReturnType<typeof ops.presentJob>;

const TASK_STATUS: Record<Job['status'], Task['status']> = {
  queued: 'working',
  processing: 'working',
  completed: 'completed',
  failed: 'failed',
  canceled: 'cancelled',
};

/** A job as an MCP task. Jobs are kept (no expiry), so `ttl` is null. */
export function taskOf(job: Job): Task {
  const status = TASK_STATUS[job.status];
  return {
    taskId: job.id,
    status,
    statusMessage: statusMessageOf(job),
    createdAt: job.created_at ?? new Date(0).toISOString(),
    lastUpdatedAt: job.finished_at ?? job.started_at ?? job.created_at ?? new Date(0).toISOString(),
    ttl: null,
    ...(status === 'working' ? { pollInterval: TASK_POLL_INTERVAL_MS } : {}),
  };
}

function statusMessageOf(job: Job): string {
  switch (job.status) {
    case 'queued':
      return `Queued: ${Math.round(job.duration_seconds)} s of audio.`;
    case 'processing':
      return `Transcribing: ${Math.round(job.processed_seconds)} of ${Math.round(job.duration_seconds)} s (${Math.floor(job.progress * 100)}%).`;
    case 'completed':
      return 'Completed.';
    case 'failed':
      return job.error?.message ?? 'Failed.';
    case 'canceled':
      return 'Canceled; nothing was charged.';
  }
}

/**
 * A failure before the task exists (bad audio, no credits, the rate limit…) is a JSON-RPC error:
 * a task-augmented call must answer a task or an error, never a tool result. Its `data.error` is
 * the contract's error body, as a tool result would carry it.
 */
export function taskCreationError(err: MurmurError): McpError {
  const body = toErrorBody(err, currentContext()?.requestId ?? '');
  const code = body.error.type === 'invalid_request_error' ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new McpError(code, body.error.message, body);
}

/** Only task ids that can be job ids are looked up; anything else is not found without a call. */
const looksLikeJobId = (id: string) => /^trn_[A-Za-z0-9_-]{1,100}$/.test(id);

async function jobOrNull(ctx: ops.OperationContext, taskId: string): Promise<Job | null> {
  if (!looksLikeJobId(taskId)) return null;
  try {
    return await ops.getTranscription(ctx, taskId);
  } catch (err) {
    if (err instanceof MurmurError && isErrorCode(err.code) && err.code === 'not_found') return null;
    throw err;
  }
}

/** The caller's jobs as the SDK's task store (one per request: the caller is the request's). */
export function jobTaskStore(ctx: ops.OperationContext, log: Logger): TaskStore {
  const notHere = (what: string) => new McpError(ErrorCode.InvalidRequest, `${what}: tasks here are transcription jobs, made by a task-augmented tools/call of transcribe.`);
  return {
    async createTask(_options: CreateTaskOptions) {
      throw notHere('Tasks are not created directly');
    },
    async storeTaskResult() {
      throw notHere('Task results are stored by the transcription service');
    },
    async getTask(taskId) {
      const job = await jobOrNull(ctx, taskId);
      return job ? taskOf(job) : null;
    },
    async getTaskResult(taskId) {
      const job = await jobOrNull(ctx, taskId);
      if (!job) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      try {
        return toolSuccess(ops.jobResult(job));
      } catch (err) {
        return toolError(asPublicError(err, log, { tool: 'transcribe' }));
      }
    },
    async updateTaskStatus(taskId, status) {
      if (status !== 'cancelled') throw notHere(`A task's status changes only with its job`);
      await ops.cancelTranscription(ctx, taskId);
    },
    async listTasks(cursor) {
      const page = await ops.listTranscriptions(ctx, { limit: ops.MAX_PAGE_LIMIT, cursor });
      return { tasks: page.data.map(taskOf), ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}) };
    },
  };
}
