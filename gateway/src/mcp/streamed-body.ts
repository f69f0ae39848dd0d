/**
 * A /mcp body too large to read before looking at it (declared over MCP_SMALL_BODY_BYTES), or of
 * unknown length (chunked), read as it arrives by the gateway's JSON tokenizer. Nothing of it is
 * held but the message outside `params.arguments.audio_base64` (as source text, for JSON.parse at
 * the end) and, for a `tools/call` of transcribe, the audio's decoded bytes (audio-argument.ts):
 * the base64 text itself never sits in memory.
 *
 * Reading stops once MCP_SMALL_BODY_BYTES have arrived, and `next` reports the message's `method`
 * and tool name read so far; the caller decides (scope, billing, room: handler.ts) and either
 * `proceed`s with the limits of that call or `stop`s and answers with `Connection: close`, the
 * rest unread. A body that ends sooner is simply the message.
 *
 * Failures reject as the body readers' do: `invalid_request` for bad JSON or bytes that are not
 * UTF-8 (naming the field), the limit's refusal past it, `request_timeout` when the body stops
 * arriving (body-idle-timeout.ts), an AbortError when the client goes away.
 */
import type { IncomingMessage } from 'node:http';
import { MurmurError } from '@murmur/contract';
import { abortError, clientGone, goneError } from '../http/client-gone';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, watchBodyIdle } from '../http/body-idle-timeout';
import { JsonTokenizer } from '../http/json-tokenizer';
import { AudioCollector } from './audio-argument';
import { MCP_SMALL_BODY_BYTES } from './body-limit';

/** Where the transcribe tool's audio is in a JSON-RPC request. */
const AUDIO_PATH = ['params', 'arguments', 'audio_base64'] as const;
/** What the message holds in place of audio received as a stream (any non-empty text: the tool reads the audio from the collector). */
const AUDIO_STAND_IN = '(received as a stream)';
/** Objects and arrays nest at most this deep (JSON-RPC envelopes nest 4 or 5). */
const MAX_DEPTH = 32;

/** Where reading stands: the whole message, or (past the small limit) what it is so far. */
export type BodyProgress =
  | { done: true; message: unknown; audio?: AudioCollector }
  | { done: false; method: string | undefined; tool: string | undefined };

/** What the rest of a large body may hold, once its call is known. */
export interface LargeBodyLimits {
  /** The whole body, in bytes. */
  maxBodyBytes: number;
  /** Characters of it outside the streamed audio. */
  maxHeldChars: number;
  /** The refusal past either. */
  tooLarge(): MurmurError;
}

export interface StreamedBodyOptions {
  idleTimeoutMs?: number;
}

export class StreamedMcpBody {
  private readonly tokenizer: JsonTokenizer;
  private received = 0;
  private limits: LargeBodyLimits | null = null;
  private method: string | undefined;
  private tool: string | undefined;
  private audio: AudioCollector | null = null;
  private started = false;
  private settled = false;
  private failure: unknown = null;
  private waiting: { resolve(progress: BodyProgress): void; reject(err: unknown): void } | null = null;
  private stopIdle = () => {};

  constructor(
    private readonly req: IncomingMessage,
    private readonly opts: StreamedBodyOptions = {},
  ) {
    this.tokenizer = new JsonTokenizer(
      {
        member: (key, value) => this.member(key, value),
        streamStart: () => {
          this.audio = new AudioCollector();
        },
        streamText: (_key, text) => this.audio!.write(text),
        streamEnd: () => this.audio!.end(),
      },
      // No cap of its own until the call is known: what it holds is at most what has arrived.
      { streams: (path) => this.isAudio(path), maxHeldChars: Number.MAX_SAFE_INTEGER, maxDepth: MAX_DEPTH, keepText: true, tooLarge: () => this.limits!.tooLarge() },
    );
  }

  /** Starts reading; resolves with the message, or with what it is so far once the small limit is passed. */
  next(): Promise<BodyProgress> {
    if (this.started) throw new Error('StreamedMcpBody: next() twice');
    this.started = true;
    if (clientGone(this.req)) return Promise.reject(goneError());
    const progress = this.wait();
    this.req.on('data', this.onData);
    this.req.on('end', this.onEnd);
    this.req.on('close', this.onClose);
    this.req.on('error', this.onClose);
    if (!this.settled) this.stopIdle = watchBodyIdle(this.req, this.opts.idleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS, (err) => this.fail(err));
    return progress;
  }

  /** Reads the rest of a body the caller accepted, within `limits`; resolves with the message. */
  proceed(limits: LargeBodyLimits): Promise<BodyProgress> {
    if (this.failure !== null) return Promise.reject(this.failure);
    this.limits = limits;
    this.tokenizer.maxHeldChars = limits.maxHeldChars;
    const progress = this.wait();
    this.req.resume();
    return progress;
  }

  /** Stops reading for good (the caller refused the call): the rest is left unread. */
  stop(): void {
    if (this.settled) return;
    this.settled = true;
    this.detach();
  }

  private wait(): Promise<BodyProgress> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  private readonly onData = (chunk: Buffer) => {
    if (this.settled) return;
    try {
      this.received += chunk.length;
      if (this.limits && this.received > this.limits.maxBodyBytes) throw this.limits.tooLarge();
      this.tokenizer.write(chunk);
      if (!this.limits && this.received > MCP_SMALL_BODY_BYTES) {
        // Past the small limit: nothing more is read until the caller has decided.
        this.req.pause();
        this.report({ done: false, method: this.method, tool: this.tool });
      }
    } catch (err) {
      this.fail(err);
    }
  };

  private readonly onEnd = () => {
    if (this.settled) return;
    try {
      this.tokenizer.end();
      const message = JSON.parse(this.tokenizer.kept) as unknown;
      if (this.audio) setAudio(message);
      this.settled = true;
      this.detach();
      this.report({ done: true, message, ...(this.audio ? { audio: this.audio } : {}) });
    } catch (err) {
      this.fail(err);
    }
  };

  private readonly onClose = () => {
    if (!this.req.complete) this.fail(abortError('The client disconnected before the body was read.'));
  };

  private member(key: string, value: unknown): void {
    if (typeof value !== 'string') return;
    const path = this.tokenizer.path;
    if (path.length === 1 && key === 'method') this.method = value;
    else if (path.length === 2 && path[0] === 'params' && key === 'name') this.tool = value;
  }

  /** Only a transcribe call's audio is streamed (its method and name come first, as clients send them). */
  private isAudio(path: readonly string[]): boolean {
    if (this.method !== 'tools/call' || this.tool !== 'transcribe') return false;
    if (path.length !== AUDIO_PATH.length || !AUDIO_PATH.every((key, i) => path[i] === key)) return false;
    if (this.audio) throw new MurmurError('invalid_request', '`audio_base64` is given more than once.', { param: 'audio_base64' });
    return true;
  }

  private report(progress: BodyProgress): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.resolve(progress);
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = err;
    this.detach();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(err);
  }

  private detach(): void {
    this.stopIdle();
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('close', this.onClose);
    this.req.off('error', this.onClose);
    if (!this.req.readableEnded) this.req.pause();
  }
}

/** Puts the stand-in where the streamed audio was (the tokenizer kept `""` there). */
function setAudio(message: unknown): void {
  const args = (message as { params?: { arguments?: Record<string, unknown> } } | null)?.params?.arguments;
  if (args && typeof args === 'object') args.audio_base64 = AUDIO_STAND_IN;
}
