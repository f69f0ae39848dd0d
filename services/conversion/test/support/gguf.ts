/**
 * A minimal GGUF v3 writer and a tiny llama-architecture model built with it, so the llama
 * engine's test needs no download: 2 layers, n_embd 32, 2 heads, feed-forward 64, a 354-token
 * SentencePiece vocabulary (control tokens, the 256 byte-fallback tokens, printable ASCII and
 * "▁"), F32 tensors filled from a seeded PRNG.
 *
 * Random weights write random tokens, and under a JSON grammar random tokens make strings
 * that rarely end. So, on top of the small random values, the embedding and output matrices
 * carry a designed "bigram" signal: every token's embedding points at its class (quote,
 * letter, "[", "}", other) and the output matrix scores what should follow each class — a
 * letter after an opening quote, a closing quote after a letter, "]" after "}" — and the
 * end-of-sequence token above everything (the grammar only allows it once the JSON is done).
 * With greedy sampling the model then writes a short, valid object every time. It proves the
 * path (load → grammar → structured output → render), not the prose.
 *
 * Format: "GGUF", version 3, tensor count and key/value count (u64), the key/values (strings
 * are u64 length + UTF-8), tensor infos (name, dims innermost first, type, offset), padding to
 * `general.alignment` (32), then the tensor data, each tensor aligned to 32 bytes.
 */
import * as fs from 'node:fs';
import { seededRandom } from '@murmur/kit';

enum ValueType {
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
}
const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

type Scalar = { type: ValueType.UINT32 | ValueType.INT32 | ValueType.FLOAT32; value: number } | { type: ValueType.BOOL; value: boolean } | { type: ValueType.STRING; value: string };
type Value = Scalar | { type: ValueType.ARRAY; itemType: ValueType.STRING; items: string[] } | { type: ValueType.ARRAY; itemType: ValueType.FLOAT32 | ValueType.INT32; items: number[] };

export interface GgufTensor {
  name: string;
  /** Innermost dimension first (GGML's ne[0], ne[1], …). */
  dims: number[];
  data: Float32Array;
}

/** Appends little-endian values to a growing list of buffers. */
class Writer {
  private readonly parts: Buffer[] = [];
  length = 0;

  bytes(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.bytes(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.bytes(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.bytes(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.bytes(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.bytes(b);
  }
  pad(to: number): void {
    const rem = this.length % to;
    if (rem !== 0) this.bytes(Buffer.alloc(to - rem));
  }
  result(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function writeValue(w: Writer, v: Value): void {
  w.u32(v.type);
  switch (v.type) {
    case ValueType.UINT32:
      return w.u32(v.value);
    case ValueType.INT32:
      return w.i32(v.value);
    case ValueType.FLOAT32:
      return w.f32(v.value);
    case ValueType.BOOL:
      return w.bytes(Buffer.from([v.value ? 1 : 0]));
    case ValueType.STRING:
      return w.str(v.value);
    case ValueType.ARRAY:
      w.u32(v.itemType);
      w.u64(v.items.length);
      for (const item of v.items) {
        if (v.itemType === ValueType.STRING) w.str(item as string);
        else if (v.itemType === ValueType.FLOAT32) w.f32(item as number);
        else w.i32(item as number);
      }
  }
}

/** Serialises a GGUF v3 file. */
export function encodeGguf(metadata: [string, Value][], tensors: GgufTensor[]): Buffer {
  const w = new Writer();
  w.bytes(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, value] of metadata) {
    w.str(key);
    writeValue(w, value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length) throw new Error(`${t.name}: ${t.data.length} values for dims ${t.dims.join('×')}`);
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offsets.push(offset);
    offset += Math.ceil((elements * 4) / ALIGNMENT) * ALIGNMENT;
  }
  w.pad(ALIGNMENT);
  const dataStart = w.length;
  tensors.forEach((t, i) => {
    const at = dataStart + offsets[i]!;
    if (w.length < at) w.bytes(Buffer.alloc(at - w.length));
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  });
  w.pad(ALIGNMENT);
  return w.result();
}


export interface TinyLlamaOptions {
  seed?: number;
  contextLength?: number;
}

const N_EMBD = 32;
const N_LAYER = 2;
const N_HEAD = 2;
const N_FF = 64;
/** The letter every string of the test model's answers is made of. */
export const TINY_LLAMA_LETTER = 'x';

/** The vocabulary: <unk>, <s>, </s>, <0x00>…<0xFF>, then "▁" and printable ASCII. */
export function tinyVocabulary(): { tokens: string[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let b = 0; b < 256; b += 1) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  tokens.push('▁');
  types.push(1);
  for (let c = 0x21; c <= 0x7e; c += 1) {
    tokens.push(String.fromCharCode(c));
    types.push(1);
  }
  return { tokens, types };
}

/** Token classes of the designed bigram signal. */
enum Cls {
  QUOTE = 0,
  LETTER = 1,
  OPEN_BRACKET = 2,
  CLOSE_BRACE = 3,
  OTHER = 4,
}

function classOf(token: string): Cls {
  if (token === '"') return Cls.QUOTE;
  if (/^[A-Za-z0-9]$/.test(token)) return Cls.LETTER;
  if (token === '[') return Cls.OPEN_BRACKET;
  if (token === '}') return Cls.CLOSE_BRACE;
  return Cls.OTHER;
}

/** How much a token of class `prev` wants `next` to follow it. */
function preference(prev: Cls, next: string): number {
  if (next === '</s>') return 8;
  const table: Record<Cls, Record<string, number>> = {
    [Cls.QUOTE]: { [TINY_LLAMA_LETTER]: 6, ']': 5, '}': 4.5, ',': 4, '"': 1 },
    [Cls.LETTER]: { '"': 6, ']': 3, '}': 3, ',': 2 },
    [Cls.OPEN_BRACKET]: { '"': 6, '{': 6, ']': 1 },
    [Cls.CLOSE_BRACE]: { ']': 6, '}': 5, ',': 2 },
    [Cls.OTHER]: { '"': 6, '{': 5, '[': 5, ']': 3, '}': 3 },
  };
  return table[prev][next] ?? (next === '▁' || next.startsWith('<0x') ? -6 : -2);
}

/** Writes the tiny model to `file`; returns its vocabulary size. */
export function writeTinyLlamaGguf(file: string, opts: TinyLlamaOptions = {}): { vocabSize: number } {
  const rand = seededRandom(opts.seed ?? 1234);
  const small = (n: number, scale: number) => Float32Array.from({ length: n }, () => (rand() * 2 - 1) * scale);
  const ones = (n: number) => new Float32Array(n).fill(1);
  const { tokens, types } = tinyVocabulary();
  const nVocab = tokens.length;

  // Embedding: one class axis per token (dims 0–4) plus a little noise everywhere.
  const embd = small(N_EMBD * nVocab, 0.01);
  tokens.forEach((t, i) => {
    embd[i * N_EMBD + classOf(t)] = 1;
  });
  // Output: the score of `next` after class c sits on axis c.
  const output = small(N_EMBD * nVocab, 0.01);
  tokens.forEach((t, i) => {
    for (let c = Cls.QUOTE; c <= Cls.OTHER; c += 1) output[i * N_EMBD + c] = preference(c, t);
  });

  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dims: [N_EMBD, nVocab], data: embd },
    { name: 'output_norm.weight', dims: [N_EMBD], data: ones(N_EMBD) },
    { name: 'output.weight', dims: [N_EMBD, nVocab], data: output },
  ];
  for (let l = 0; l < N_LAYER; l += 1) {
    tensors.push(
      { name: `blk.${l}.attn_norm.weight`, dims: [N_EMBD], data: ones(N_EMBD) },
      { name: `blk.${l}.attn_q.weight`, dims: [N_EMBD, N_EMBD], data: small(N_EMBD * N_EMBD, 0.002) },
      { name: `blk.${l}.attn_k.weight`, dims: [N_EMBD, N_EMBD], data: small(N_EMBD * N_EMBD, 0.002) },
      { name: `blk.${l}.attn_v.weight`, dims: [N_EMBD, N_EMBD], data: small(N_EMBD * N_EMBD, 0.002) },
      { name: `blk.${l}.attn_output.weight`, dims: [N_EMBD, N_EMBD], data: small(N_EMBD * N_EMBD, 0.002) },
      { name: `blk.${l}.ffn_norm.weight`, dims: [N_EMBD], data: ones(N_EMBD) },
      { name: `blk.${l}.ffn_gate.weight`, dims: [N_EMBD, N_FF], data: small(N_EMBD * N_FF, 0.002) },
      { name: `blk.${l}.ffn_up.weight`, dims: [N_EMBD, N_FF], data: small(N_EMBD * N_FF, 0.002) },
      { name: `blk.${l}.ffn_down.weight`, dims: [N_FF, N_EMBD], data: small(N_FF * N_EMBD, 0.002) },
    );
  }

  const u32 = (value: number): Value => ({ type: ValueType.UINT32, value });
  const metadata: [string, Value][] = [
    ['general.architecture', { type: ValueType.STRING, value: 'llama' }],
    ['general.name', { type: ValueType.STRING, value: 'murmur-test-tiny-llama' }],
    ['general.alignment', u32(ALIGNMENT)],
    ['llama.context_length', u32(opts.contextLength ?? 4096)],
    ['llama.embedding_length', u32(N_EMBD)],
    ['llama.block_count', u32(N_LAYER)],
    ['llama.feed_forward_length', u32(N_FF)],
    ['llama.attention.head_count', u32(N_HEAD)],
    ['llama.attention.head_count_kv', u32(N_HEAD)],
    ['llama.rope.dimension_count', u32(N_EMBD / N_HEAD)],
    ['llama.attention.layer_norm_rms_epsilon', { type: ValueType.FLOAT32, value: 1e-5 }],
    ['llama.vocab_size', u32(nVocab)],
    ['tokenizer.ggml.model', { type: ValueType.STRING, value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: ValueType.ARRAY, itemType: ValueType.STRING, items: tokens }],
    ['tokenizer.ggml.scores', { type: ValueType.ARRAY, itemType: ValueType.FLOAT32, items: tokens.map(() => 0) }],
    ['tokenizer.ggml.token_type', { type: ValueType.ARRAY, itemType: ValueType.INT32, items: types }],
    ['tokenizer.ggml.unknown_token_id', u32(0)],
    ['tokenizer.ggml.bos_token_id', u32(1)],
    ['tokenizer.ggml.eos_token_id', u32(2)],
    ['tokenizer.ggml.add_bos_token', { type: ValueType.BOOL, value: true }],
    ['tokenizer.ggml.add_eos_token', { type: ValueType.BOOL, value: false }],
  ];
  fs.writeFileSync(file, encodeGguf(metadata, tensors));
  return { vocabSize: nVocab };
}
