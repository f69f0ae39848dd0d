/**
 * The llama engine: a GGUF model run in-process by node-llama-cpp (its prebuilt CPU binding,
 * `build: "never"` — nothing is compiled or downloaded), answering under a grammar made from
 * the kind's JSON schema, so the model can only write a JSON object of the right shape. The
 * answer then goes through the same checks and renderers as every engine.
 *
 * The model loads on first use and stays loaded; conversions run one at a time on one context
 * sequence (a small CPU box has no room for two). A transcript too long for the context is
 * first condensed extractively — its most central sentences, in order — to fit.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importEsm } from '../esm';
import { readTranscript } from '../nlp/document';
import { rankSentences } from '../nlp/rank';
import { ANSWER_SCHEMA, answerPrompt, modelAnswer } from '../answers';
import { EngineError, type AnswerInput, type ConversionEngine, type EngineAnswer, type EngineInput } from './engine';
import type { Artifact } from '../artifacts';
import { buildPrompt, modelArtifact, schemaFor } from './structured';

/** The slice of node-llama-cpp's API this engine uses (the package is ESM; see esm.ts). */
interface LlamaCppModule {
  getLlama(options: { build: 'never'; gpu: false; logLevel?: string; progressLogs?: boolean }): Promise<LlamaRuntime>;
  LlamaChatSession: new (options: { contextSequence: LlamaSequence; systemPrompt?: string; autoDisposeSequence?: boolean }) => LlamaSession;
}
interface LlamaRuntime {
  loadModel(options: { modelPath: string; gpuLayers?: number }): Promise<LlamaModel>;
  createGrammarForJsonSchema(schema: unknown): Promise<LlamaGrammar>;
  dispose(): Promise<void>;
}
interface LlamaModel {
  readonly trainContextSize: number;
  tokenize(text: string): unknown[];
  createContext(options: { contextSize: number; sequences?: number; threads?: number }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface LlamaContext {
  readonly contextSize: number;
  getSequence(): LlamaSequence;
  dispose(): Promise<void>;
}
interface LlamaSequence {
  clearHistory(): Promise<void>;
}
interface LlamaSession {
  prompt(text: string, options: { grammar: LlamaGrammar; maxTokens: number; signal: AbortSignal; temperature: number; seed?: number }): Promise<string>;
  dispose(options?: { disposeSequence?: boolean }): void;
}
interface LlamaGrammar {
  parse(text: string): unknown;
}

export interface LlamaEngineOptions {
  /** Absolute or relative path of the .gguf file. */
  modelPath: string;
  /** Wanted context window; capped by the model's training context. */
  contextSize: number;
  /** Most tokens written for one artifact. */
  maxTokens: number;
  /**
   * CPU threads for the model; 0 or unset lets node-llama-cpp choose. On a small box a tiny
   * model runs far faster on one thread: idle threads spin between tokens and starve the
   * sampler.
   */
  threads?: number;
  /** Sampling seed, used when temperature > 0. */
  seed?: number;
  /** 0 (the default) is greedy decoding: the same transcript gives the same artifact. */
  temperature?: number;
}

interface Loaded {
  llama: LlamaRuntime;
  module: LlamaCppModule;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaSequence;
  /** By artifact kind, and `answer` for answers. */
  grammars: Map<string, Promise<LlamaGrammar>>;
}

/**
 * Checks that `file` starts like a GGUF v2/v3 model with sane counts. node-llama-cpp's own
 * reader can spin for minutes on a file that merely starts with "GGUF"; this fails in
 * microseconds instead. Returns a reason, or null when the header is plausible.
 */
export function ggufHeaderProblem(file: string): string | null {
  let header: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      header = Buffer.alloc(24);
      const read = fs.readSync(fd, header, 0, 24, 0);
      if (read < 24) return `${file} is too short to be a GGUF model`;
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    return `${file} cannot be read: ${(err as Error).message}`;
  }
  if (header.toString('latin1', 0, 4) !== 'GGUF') return `${file} is not a GGUF model (no "GGUF" magic)`;
  const version = header.readUInt32LE(4);
  if (version !== 2 && version !== 3) return `${file} is GGUF version ${version}; versions 2 and 3 are supported`;
  const tensors = header.readBigUInt64LE(8);
  const keys = header.readBigUInt64LE(16);
  if (tensors === 0n || tensors > 1_000_000n || keys > 1_000_000n) return `${file} has an implausible GGUF header (${tensors} tensors, ${keys} keys)`;
  return null;
}

/** The transcript's most central sentences, in order, within `maxChars`. */
export function condenseTranscript(transcript: string, maxChars: number): string {
  const ranked = rankSentences(readTranscript(transcript).sentences);
  const chosen = new Set<number>();
  let used = 0;
  for (const r of [...ranked].sort((a, b) => b.score - a.score)) {
    const length = r.sentence.text.length + 1;
    if (used + length > maxChars) continue;
    chosen.add(r.sentence.index);
    used += length;
  }
  return ranked.filter((r) => chosen.has(r.sentence.index)).map((r) => (r.sentence.speaker ? `${r.sentence.speaker}: ${r.sentence.text}` : r.sentence.text)).join('\n');
}

export class LlamaEngine implements ConversionEngine {
  readonly name = 'llama';
  private loading?: Promise<Loaded>;
  /** Conversions run one after another on the one sequence. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LlamaEngineOptions) {}

  /** Loads the runtime, the model and a context (once; a failed load is retried next time). */
  private load(): Promise<Loaded> {
    this.loading ??= (async () => {
      const problem = ggufHeaderProblem(this.opts.modelPath);
      if (problem) throw new Error(problem);
      const module = await importEsm<LlamaCppModule>('node-llama-cpp');
      const llama = await module.getLlama({ build: 'never', gpu: false, logLevel: 'error', progressLogs: false });
      const model = await llama.loadModel({ modelPath: path.resolve(this.opts.modelPath), gpuLayers: 0 });
      const context = await model.createContext({
        contextSize: Math.min(this.opts.contextSize, model.trainContextSize || this.opts.contextSize),
        sequences: 1,
        ...(this.opts.threads ? { threads: this.opts.threads } : {}),
      });
      return { llama, module, model, context, sequence: context.getSequence(), grammars: new Map() };
    })();
    this.loading.catch(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  async convert(input: EngineInput): Promise<Artifact> {
    return this.queued(() => this.convertNow(input));
  }

  /** Runs `work` after every earlier call: conversions and answers share the one sequence. */
  private queued<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The loaded model and the grammar of `schema` (made once per key), or an EngineError. */
  private async ready(signal: AbortSignal, key: string, schema: () => Record<string, unknown>): Promise<{ loaded: Loaded; grammar: Promise<LlamaGrammar> }> {
    signal.throwIfAborted();
    let loaded: Loaded;
    try {
      loaded = await this.load();
    } catch (err) {
      throw new EngineError(`the llama model could not be loaded: ${(err as Error).message}`, { cause: err });
    }
    const grammar = loaded.grammars.get(key) ?? loaded.llama.createGrammarForJsonSchema(schema() as never);
    loaded.grammars.set(key, grammar);
    return { loaded, grammar };
  }

  private async convertNow(input: EngineInput): Promise<Artifact> {
    const { loaded, grammar } = await this.ready(input.signal, input.kind, () => schemaFor(input.kind));

    const maxTokens = Math.min(this.opts.maxTokens, Math.floor(loaded.context.contextSize / 2));
    const budget = loaded.context.contextSize - maxTokens;
    let prompt = buildPrompt(input);
    const promptTokens = (p: { system: string; user: string }) => loaded.model.tokenize(`${p.system}\n${p.user}`).length + 64;
    const used = promptTokens(prompt);
    if (used > budget) {
      const ratio = Math.max(0.05, (budget - promptTokens({ ...prompt, user: '' })) / used);
      prompt = buildPrompt({ ...input, transcript: condenseTranscript(input.transcript, Math.floor(input.transcript.length * ratio * 0.9)) });
      if (promptTokens(prompt) > budget) throw new EngineError(`the transcript does not fit the model's ${loaded.context.contextSize}-token context`);
    }

    const answer = await this.chat(loaded, prompt, await grammar, maxTokens, input.signal, 'conversion');
    return modelArtifact(answer, input);
  }

  async answer(input: AnswerInput): Promise<EngineAnswer> {
    return this.queued(() => this.answerNow(input));
  }

  private async answerNow(input: AnswerInput): Promise<EngineAnswer> {
    const { loaded, grammar } = await this.ready(input.signal, 'answer', () => ANSWER_SCHEMA as unknown as Record<string, unknown>);
    const maxTokens = Math.min(this.opts.maxTokens, Math.floor(loaded.context.contextSize / 4));
    const budget = loaded.context.contextSize - maxTokens;
    // The worst-ranked passages give way first when the context is short.
    let passages = input.passages;
    let prompt = answerPrompt({ question: input.question, passages });
    while (passages.length > 1 && loaded.model.tokenize(`${prompt.system}\n${prompt.user}`).length + 64 > budget) {
      passages = passages.slice(0, -1);
      prompt = answerPrompt({ question: input.question, passages });
    }
    const answer = await this.chat(loaded, prompt, await grammar, maxTokens, input.signal, 'answer');
    return modelAnswer(answer, passages.length);
  }

  /** One grammar-constrained chat turn on the engine's one sequence; the model's text. */
  private async chat(loaded: Loaded, prompt: { system: string; user: string }, grammar: LlamaGrammar, maxTokens: number, signal: AbortSignal, what: string): Promise<string> {
    await loaded.sequence.clearHistory();
    const session = new loaded.module.LlamaChatSession({ contextSequence: loaded.sequence, systemPrompt: prompt.system, autoDisposeSequence: false });
    try {
      return await session.prompt(prompt.user, {
        grammar,
        maxTokens,
        signal,
        temperature: this.opts.temperature ?? 0,
        ...(this.opts.seed !== undefined ? { seed: this.opts.seed } : {}),
      });
    } catch (err) {
      throw new EngineError(signal.aborted ? `the llama ${what} was stopped` : `the llama model failed: ${(err as Error).message}`, { cause: err });
    } finally {
      session.dispose({ disposeSequence: false });
    }
  }

  async close(): Promise<void> {
    const loading = this.loading;
    this.loading = undefined;
    if (!loading) return;
    const loaded = await loading.catch(() => undefined);
    if (!loaded) return;
    await loaded.context.dispose();
    await loaded.model.dispose();
    await loaded.llama.dispose();
  }
}
