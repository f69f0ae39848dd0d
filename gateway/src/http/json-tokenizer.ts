/**
 * An incremental JSON tokenizer, fed bytes in pieces split anywhere (inside a key, an escape, a
 * UTF-8 sequence, a literal), for bodies too large to hold: REST's POST /transcribe JSON (one
 * flat object, `maxDepth` 1) and /mcp's JSON-RPC messages (nested). A member whose string value
 * the `streams` option picks is not collected: its text is handed out as it arrives, unescaped,
 * so a 670 MB string never sits in memory. Everything else is held, up to `maxHeldChars` in all,
 * and reported whole (scalars), or kept as source text (`keepText`) for JSON.parse at the end.
 *
 * Strict RFC 8259 syntax, except that streamed strings are not checked for raw control
 * characters (see `streamText`). The bytes must be UTF-8: an invalid sequence is refused naming
 * the string it is in (Node's decoders would silently turn it into U+FFFD). Errors are
 * `invalid_request`: syntax errors and a body that is not an object name no parameter; an
 * object or array deeper than `maxDepth` names its key; the size cap names the key being read.
 */
import { MurmurError } from '@murmur/contract';

export type JsonScalar = string | number | boolean | null;

/** What the tokenizer reports, in body order. A handler may throw to stop it. */
export interface JsonHandler {
  /**
   * A member (or array element, keyed by its index) with a complete scalar value; strings the
   * tokenizer streams are streamed instead. `path`: its key and those of the objects and arrays
   * around it, outermost first.
   */
  member(key: string, value: JsonScalar, path: readonly string[]): void;
  /** A streamed string value begins. */
  streamStart(key: string): void;
  /**
   * The next piece of that string, unescaped (may split a surrogate pair). For speed, streamed
   * text is NOT checked for raw control characters (U+0000–U+001F, which strict JSON forbids
   * unescaped): the receiver must refuse or tolerate them.
   */
  streamText(key: string, text: string): void;
  /** The string ended. */
  streamEnd(key: string): void;
}

export interface JsonTokenizerOptions {
  /** Whether the string value starting now is streamed; `path` names it (keys from the outermost object; array indexes as strings). */
  streams(path: readonly string[]): boolean;
  /** Cap on every character outside streamed strings: keys, other values, whitespace. */
  maxHeldChars: number;
  /** How deep objects and arrays may nest: 1 (the default) is one flat object. */
  maxDepth?: number;
  /** The body must be an object (default: an array is accepted too where `maxDepth` allows nesting). */
  objectRoot?: boolean;
  /** Keep the source text outside streamed strings (`kept`), each streamed string left as `""`. */
  keepText?: boolean;
  /** The refusal of a body over `maxHeldChars` (default: `invalid_request` naming the member being read). */
  tooLarge?(param: string | null, maxHeldChars: number): MurmurError;
}

type State =
  | 'before-root'
  | 'object-start'
  | 'array-start'
  | 'before-key'
  | 'key'
  | 'after-key'
  | 'before-value'
  | 'string'
  | 'literal'
  | 'number'
  | 'after-value'
  | 'done';

/** An open object or array: the key it has in its parent ('' for the outermost), and the index of an array's current element. */
interface Container {
  array: boolean;
  key: string;
  index: number;
}

const SPECIAL_IN_STRING = /["\\\u0000-\u001f]/g;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const LITERALS: Record<string, JsonScalar> = { true: true, false: false, null: null };

function indexOrEnd(s: string, ch: string, from: number): number {
  const at = s.indexOf(ch, from);
  return at < 0 ? s.length : at;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** Feed with `write` as bytes arrive and call `end` once; both throw on invalid input. */
export class JsonTokenizer {
  private state: State = 'before-root';
  /** Strict UTF-8 (the BOM is kept, so a body starting with one is refused as before). */
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** The last bytes written (at most 3): where an incomplete UTF-8 sequence the decoder holds starts. */
  private tail: Buffer = Buffer.alloc(0);
  private readonly stack: Container[] = [];
  private key = '';
  /** The key, string, number or literal being read (not for streamed strings). */
  private text = '';
  private streaming = false;
  /** Unescaped pieces of the streamed string, handed out once per write. */
  private pieces: string[] = [];
  /** A pending escape: '' for none, else the backslash and what followed it so far. */
  private escape = '';
  private held = 0;
  private maxHeld: number;
  private readonly keptParts: string[] = [];
  private failed = false;
  /** Next quote and backslash positions in the chunk being consumed (streamed strings only). */
  private quoteAt = -1;
  private backslashAt = -1;

  constructor(
    private readonly handler: JsonHandler,
    private readonly options: JsonTokenizerOptions,
  ) {
    this.maxHeld = options.maxHeldChars;
  }

  /** Raises or lowers the cap on held characters from now on (the next write is checked against it). */
  set maxHeldChars(chars: number) {
    this.maxHeld = chars;
  }

  /** The path of the member being read: its key and those of the objects and arrays around it. */
  get path(): string[] {
    const path = this.stack.slice(1).map((c) => c.key);
    path.push(this.key);
    return path;
  }

  /** The source text read so far outside streamed strings (with `keepText`): whole JSON once `end` returned. */
  get kept(): string {
    return this.keptParts.join('');
  }

  write(chunk: Buffer | string): void {
    this.guard(() => {
      if (typeof chunk === 'string') {
        this.consume(chunk);
        return;
      }
      let text: string;
      try {
        text = this.utf8.decode(chunk, { stream: true });
      } catch {
        this.refuseUtf8(chunk);
      }
      this.tail = lastBytes(this.tail, chunk);
      this.consume(text);
    });
  }

  end(): void {
    this.guard(() => {
      let rest: string;
      try {
        rest = this.utf8.decode();
      } catch {
        // The body ends inside a UTF-8 sequence.
        throw this.utf8Error();
      }
      if (rest) this.consume(rest);
      if (this.state === 'number') this.finishNumber();
      if (this.state === 'before-root') throw syntax('The body is empty; send a JSON object.');
      if (this.state !== 'done') throw syntax('The JSON body ends before the object is complete.');
    });
  }

  private guard(run: () => void): void {
    if (this.failed) throw new Error('JsonTokenizer: used after an error');
    try {
      run();
    } catch (err) {
      this.failed = true;
      throw err;
    }
  }

  /** `chunk` holds bytes that are not UTF-8: reads up to the first of them, then refuses naming where it is. */
  private refuseUtf8(chunk: Buffer): never {
    const bytes = Buffer.concat([incompleteSequence(this.tail), chunk]);
    const valid = bytes.toString('utf8', 0, firstInvalidUtf8(bytes));
    if (valid) this.consume(valid);
    throw this.utf8Error();
  }

  private utf8Error(): MurmurError {
    if (this.state === 'string') {
      const param = clip(this.path.join('.'));
      return new MurmurError('invalid_request', `\`${param}\` is not valid UTF-8. Send every string of the body as UTF-8 text.`, { param });
    }
    if (this.state === 'key') {
      const param = this.stack.length > 1 ? clip(this.stack.slice(1).map((c) => c.key).join('.')) : null;
      return new MurmurError('invalid_request', 'A field name in the body is not valid UTF-8. Send the body as UTF-8 text.', { param });
    }
    return syntax('The body is not valid UTF-8. Send it as UTF-8 JSON.');
  }

  private consume(s: string): void {
    const n = s.length;
    this.quoteAt = -1;
    this.backslashAt = -1;
    let streamed = 0;
    let keptFrom = 0;
    let i = 0;
    while (i < n) {
      if (this.state === 'string') {
        // Characters of a streamed string (with its quotes) are not held, so not counted.
        const start = i;
        const wasStreaming = this.streaming;
        i = this.scanString(s, i);
        if (wasStreaming) {
          streamed += i - start;
          if (this.options.keepText) {
            this.keptParts.push(s.slice(keptFrom, start));
            // The closing quote, when this piece holds it, is kept: the value reads `""`.
            keptFrom = this.state === 'string' ? i : i - 1;
          }
        }
        continue;
      }
      const c = s.charCodeAt(i);
      switch (this.state) {
        case 'before-root':
          if (isWhitespace(c)) break;
          if (c === 0x7b) this.open(false);
          else if (c === 0x5b && this.depthAllowed() > 1 && !this.options.objectRoot) this.open(true);
          else throw syntax('The body must be a JSON object.');
          break;
        case 'object-start':
        case 'before-key':
          if (isWhitespace(c)) break;
          if (c === 0x22) {
            this.state = 'key';
            this.text = '';
            i = this.scanString(s, i + 1);
            continue;
          }
          if (c === 0x7d && this.state === 'object-start') {
            this.close();
            break;
          }
          throw syntax('The JSON body is malformed: a member name in double quotes was expected.');
        case 'array-start':
          if (isWhitespace(c)) break;
          if (c === 0x5d) {
            this.close();
            break;
          }
          this.state = 'before-value';
          continue;
        case 'key':
          i = this.scanString(s, i);
          continue;
        case 'after-key':
          if (isWhitespace(c)) break;
          if (c !== 0x3a) throw syntax(`The JSON body is malformed: \`:\` was expected after "${clip(this.key)}".`);
          this.state = 'before-value';
          break;
        case 'before-value':
          if (isWhitespace(c)) break;
          if (c === 0x22) {
            this.state = 'string';
            this.text = '';
            this.streaming = this.options.streams(this.path);
            if (this.streaming) {
              streamed += 1;
              this.handler.streamStart(this.key);
            }
            i += 1;
            continue;
          }
          if (c === 0x7b || c === 0x5b) {
            if (this.stack.length >= this.depthAllowed()) {
              // An entry of a list is named by the list (`keyterms`, not `0`).
              const named = [...this.path].reverse().find((k) => !/^\d+$/.test(k));
              const member = clip(this.path.length > 1 && /^\d+$/.test(this.key) && named ? named : this.key);
              throw new MurmurError('invalid_request', `\`${member}\` must be a single value, not an object or array.`, { param: member });
            }
            this.open(c === 0x5b);
            break;
          }
          if (c === 0x74 || c === 0x66 || c === 0x6e) {
            this.state = 'literal';
            this.text = '';
            continue;
          }
          if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
            this.state = 'number';
            this.text = '';
            continue;
          }
          throw syntax(`The JSON body is malformed: the value of "${clip(this.key)}" is not valid JSON.`);
        case 'literal': {
          this.text += s[i];
          const word = this.text;
          const match = Object.keys(LITERALS).find((w) => w.startsWith(word));
          if (!match) throw syntax(`The JSON body is malformed: the value of "${clip(this.key)}" is not valid JSON.`);
          if (match === word) this.finishValue(LITERALS[word] as JsonScalar);
          break;
        }
        case 'number':
          if (isNumberChar(c)) {
            this.text += s[i];
            break;
          }
          this.finishNumber();
          continue;
        case 'after-value': {
          if (isWhitespace(c)) break;
          const top = this.stack[this.stack.length - 1]!;
          if (c === 0x2c) {
            if (top.array) {
              top.index += 1;
              this.key = String(top.index);
              this.state = 'before-value';
            } else {
              this.state = 'before-key';
            }
          } else if (c === (top.array ? 0x5d : 0x7d)) {
            this.close();
          } else {
            throw syntax(`The JSON body is malformed: \`,\` or \`${top.array ? ']' : '}'}\` was expected after a value.`);
          }
          break;
        }
        case 'done':
          if (isWhitespace(c)) break;
          throw syntax('The JSON body has data after its closing `}`.');
      }
      i += 1;
    }
    this.flushPieces();
    if (this.options.keepText && keptFrom < n) this.keptParts.push(s.slice(keptFrom));
    this.held += n - streamed;
    if (this.held > this.maxHeld) throw this.tooLarge();
  }

  private depthAllowed(): number {
    return this.options.maxDepth ?? 1;
  }

  private open(array: boolean): void {
    this.stack.push({ array, key: this.key, index: 0 });
    this.key = array ? '0' : '';
    this.state = array ? 'array-start' : 'object-start';
  }

  private close(): void {
    const closed = this.stack.pop()!;
    this.key = closed.key;
    this.state = this.stack.length === 0 ? 'done' : 'after-value';
  }

  private tooLarge(): MurmurError {
    const inValue = this.state === 'string' || this.state === 'number' || this.state === 'literal';
    const param = inValue ? clip(this.path.join('.')) : null;
    if (this.options.tooLarge) return this.options.tooLarge(param, this.maxHeld);
    return new MurmurError('invalid_request', `The JSON fields other than the audio exceed ${formatChars(this.maxHeld)}.`, { param });
  }

  /**
   * Reads string content from `i` (just after the opening quote or where the last piece ended);
   * returns the index after what it consumed. Leaves `state` unchanged until the closing quote.
   */
  private scanString(s: string, i: number): number {
    const n = s.length;
    while (i < n) {
      if (this.escape) {
        i = this.scanEscape(s, i);
        continue;
      }
      const j = this.streaming ? this.nextQuoteOrBackslash(s, i) : this.nextSpecial(s, i);
      if (j > i) this.append(s.slice(i, j));
      if (j === n) return n;
      const c = s.charCodeAt(j);
      if (c === 0x22) {
        this.finishString();
        return j + 1;
      }
      if (c === 0x5c) {
        this.escape = '\\';
        i = j + 1;
        continue;
      }
      throw syntax('The JSON body is malformed: a control character appears unescaped inside a string.');
    }
    return n;
  }

  private nextSpecial(s: string, i: number): number {
    SPECIAL_IN_STRING.lastIndex = i;
    const found = SPECIAL_IN_STRING.exec(s);
    return found ? found.index : s.length;
  }

  /**
   * The next `"` or `\` of a streamed string, with both positions cached per chunk so a string
   * full of escapes (`\/` every few characters) is still scanned in linear time. Native
   * indexOf is ~20× faster than a regular expression over megabytes of base64.
   */
  private nextQuoteOrBackslash(s: string, i: number): number {
    if (this.quoteAt < i) this.quoteAt = indexOrEnd(s, '"', i);
    if (this.backslashAt < i) this.backslashAt = indexOrEnd(s, '\\', i);
    return Math.min(this.quoteAt, this.backslashAt);
  }

  private scanEscape(s: string, i: number): number {
    const ch = s[i] as string;
    if (this.escape === '\\') {
      const simple = SIMPLE_ESCAPES[ch];
      if (simple !== undefined) {
        this.escape = '';
        this.append(simple);
        return i + 1;
      }
      if (ch !== 'u') throw syntax(`The JSON body is malformed: \`\\${ch}\` is not a JSON escape.`);
      this.escape = '\\u';
      return i + 1;
    }
    if (!/[0-9a-fA-F]/.test(ch)) throw syntax('The JSON body is malformed: `\\u` must be followed by four hex digits.');
    this.escape += ch;
    if (this.escape.length === 6) {
      this.append(String.fromCharCode(parseInt(this.escape.slice(2), 16)));
      this.escape = '';
    }
    return i + 1;
  }

  private append(piece: string): void {
    if (this.streaming) {
      this.pieces.push(piece);
      return;
    }
    this.text += piece;
    if (this.text.length > this.maxHeld) throw this.tooLarge();
  }

  private flushPieces(): void {
    if (this.pieces.length === 0) return;
    const joined = this.pieces.length === 1 ? (this.pieces[0] as string) : this.pieces.join('');
    this.pieces = [];
    this.handler.streamText(this.key, joined);
  }

  private finishString(): void {
    if (this.state === 'key') {
      this.key = this.text;
      this.text = '';
      this.state = 'after-key';
      return;
    }
    if (this.streaming) {
      this.flushPieces();
      this.streaming = false;
      this.state = 'after-value';
      this.handler.streamEnd(this.key);
      return;
    }
    this.finishValue(this.text);
  }

  private finishNumber(): void {
    if (!NUMBER.test(this.text)) throw syntax(`The JSON body is malformed: "${clip(this.text)}" is not a valid number.`);
    this.finishValue(Number(this.text));
  }

  private finishValue(value: JsonScalar): void {
    this.text = '';
    this.state = 'after-value';
    this.handler.member(this.key, value, this.path);
  }
}

/** The last (at most 3) bytes of `previous` followed by `chunk`, copied. */
function lastBytes(previous: Buffer, chunk: Buffer): Buffer {
  if (chunk.length >= 3) return Buffer.from(chunk.subarray(chunk.length - 3));
  return Buffer.from(Buffer.concat([previous, chunk]).subarray(-3));
}

/** The bytes of a UTF-8 sequence that `tail` (the end of valid UTF-8) leaves incomplete. */
function incompleteSequence(tail: Buffer): Buffer {
  for (let k = 1; k <= tail.length; k++) {
    const b = tail[tail.length - k]!;
    if (b < 0x80) break;
    if (b >= 0xc0) {
      const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return length > k ? tail.subarray(tail.length - k) : Buffer.alloc(0);
    }
  }
  return Buffer.alloc(0);
}

/** Where the first byte that does not start a well-formed UTF-8 sequence is (Unicode Table 3-7), or the length. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    let more: number;
    let low = 0x80;
    let high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c === 0xe0) low = 0xa0;
      if (c === 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c === 0xf0) low = 0x90;
      if (c === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k <= more; k++) {
      const d = bytes[i + k];
      if (d === undefined || d < (k === 1 ? low : 0x80) || d > (k === 1 ? high : 0xbf)) return i;
    }
    i += more + 1;
  }
  return bytes.length;
}

/** A key or token short enough to quote in an error. */
function clip(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}

function formatChars(n: number): string {
  return n >= 1024 && n % 1024 === 0 ? `${n / 1024} KiB` : `${n} characters`;
}

function syntax(message: string): MurmurError {
  return new MurmurError('invalid_request', message, { param: null });
}
