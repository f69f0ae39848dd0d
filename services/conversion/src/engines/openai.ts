/**
 * The openai engine: any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM,
 * llama.cpp server) asked for structured output with `response_format: json_schema`. The
 * answer goes through the same checks and renderers as every engine. An HTTP error, a
 * timeout, a refusal, a truncated or malformed answer is an {@link EngineError}.
 */
import type { Artifact } from '../artifacts';
import { schemaFor, buildPrompt, modelArtifact } from './structured';
import { ANSWER_SCHEMA, answerPrompt, modelAnswer } from '../answers';
import { EngineError, type AnswerInput, type ConversionEngine, type EngineAnswer, type EngineInput } from './engine';

export interface OpenAiEngineOptions {
  /** e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1". */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Longest one request may take (AbortSignal.timeout); the caller's signal also applies. */
  timeoutMs: number;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

/** A JSON schema without the keywords OpenAI's strict mode rejects (string lengths). */
export function strictSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'maxLength' || k === 'minLength') continue;
    out[k] = strictSchema(v);
  }
  return out;
}

interface ChatCompletion {
  choices?: { message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }[];
}

export class OpenAiEngine implements ConversionEngine {
  readonly name = 'openai';
  private readonly url: string;

  constructor(private readonly opts: OpenAiEngineOptions) {
    this.url = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async convert(input: EngineInput): Promise<Artifact> {
    const { system, user } = buildPrompt(input);
    return modelArtifact(await this.complete(system, user, `murmur_${input.kind}`, schemaFor(input.kind), input.signal), input);
  }

  async answer(input: AnswerInput): Promise<EngineAnswer> {
    const { system, user } = answerPrompt(input);
    return modelAnswer(await this.complete(system, user, 'murmur_answer', ANSWER_SCHEMA, input.signal), input.passages.length);
  }

  /** One chat completion constrained to `schema`; the model's JSON text. */
  private async complete(system: string, user: string, name: string, schema: unknown, callerSignal: AbortSignal): Promise<string> {
    const body = {
      model: this.opts.model,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
      temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name, strict: true, schema: strictSchema(schema) } },
    };
    const signal = AbortSignal.any([callerSignal, AbortSignal.timeout(this.opts.timeoutMs)]);
    let res: Response;
    let text: string;
    try {
      res = await (this.opts.fetch ?? fetch)(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal,
      });
      text = await res.text();
    } catch (err) {
      const reason = signal.aborted ? (callerSignal.aborted ? 'the call was cancelled' : `no answer within ${this.opts.timeoutMs} ms`) : `request failed: ${(err as Error).message}`;
      throw new EngineError(`openai endpoint: ${reason}`, { cause: err });
    }
    if (!res.ok) throw new EngineError(`openai endpoint answered HTTP ${res.status}`);
    let completion: ChatCompletion;
    try {
      completion = JSON.parse(text) as ChatCompletion;
    } catch (err) {
      throw new EngineError('openai endpoint answered with a body that is not JSON', { cause: err });
    }
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new EngineError('openai endpoint answered without a choice');
    if (choice.message.refusal) throw new EngineError('the model refused the request');
    if (choice.finish_reason === 'length') throw new EngineError('the model ran out of tokens before finishing');
    if (typeof choice.message.content !== 'string' || choice.message.content.trim() === '') throw new EngineError('the model answered with no content');
    return choice.message.content;
  }
}
