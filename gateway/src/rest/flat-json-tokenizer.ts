/**
 * An incremental tokenizer for one flat JSON object (`{"key": scalar, …}`), fed bytes in pieces
 * split anywhere (inside a key, an escape, a UTF-8 sequence, a literal). Members whose key is in
 * `streamKeys` and whose value is a string are not collected: their text is handed out as it
 * arrives, unescaped, so a 670 MB string never sits in memory. Everything else is held, up to
 * `maxHeldChars` in all, and reported whole.
 *
 * Strict RFC 8259 syntax, except that streamed strings are not checked for raw control
 * characters (see `streamText`). Errors are `invalid_request`: syntax errors and a non-object
 * body name no parameter; a nested object or array names its key; the size cap names the key
 * being read.
 */
import { StringDecoder } from 'node:string_decoder';
import { MurmurError } from '@murmur/kit';

export type JsonScalar = string | number | boolean | null;

/** What the tokenizer reports, in body order. A handler may throw to stop it. */
export interface FlatJsonHandler {
  /** A member with a complete scalar value (strings of stream keys are streamed instead). */
  member(key: string, value: JsonScalar): void;
  /** A stream key's string value begins. */
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

export interface FlatJsonOptions {
  streamKeys: ReadonlySet<string>;
  /** Cap on every character outside streamed strings: keys, other values, whitespace. */
  maxHeldChars: number;
}

type State =
  | 'before-object'
  | 'object-start'
  | 'before-key'
  | 'key'
  | 'after-key'
  | 'before-value'
  | 'string'
  | 'literal'
  | 'number'
  | 'after-value'
  | 'done';

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
export class FlatJsonTokenizer {
  private state: State = 'before-object';
  private readonly utf8 = new StringDecoder('utf8');
  private key = '';
  /** The key, string, number or literal being read (not for streamed strings). */
  private text = '';
  private streaming = false;
  /** Unescaped pieces of the streamed string, handed out once per write. */
  private pieces: string[] = [];
  /** A pending escape: '' for none, else the backslash and what followed it so far. */
  private escape = '';
  private held = 0;
  private failed = false;
  /** Next quote and backslash positions in the chunk being consumed (streamed strings only). */
  private quoteAt = -1;
  private backslashAt = -1;

  constructor(
    private readonly handler: FlatJsonHandler,
    private readonly options: FlatJsonOptions,
  ) {}

  write(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.utf8.write(chunk);
    this.guard(() => this.consume(text));
  }

  end(): void {
    this.guard(() => {
      const rest = this.utf8.end();
      if (rest) this.consume(rest);
      if (this.state === 'number') this.finishNumber();
      if (this.state === 'before-object') throw syntax('The body is empty; send a JSON object.');
      if (this.state !== 'done') throw syntax('The JSON body ends before the object is complete.');
    });
  }

  private guard(run: () => void): void {
    if (this.failed) throw new Error('FlatJsonTokenizer: used after an error');
    try {
      run();
    } catch (err) {
      this.failed = true;
      throw err;
    }
  }

  private consume(s: string): void {
    const n = s.length;
    this.quoteAt = -1;
    this.backslashAt = -1;
    let streamed = 0;
    let i = 0;
    while (i < n) {
      if (this.state === 'string') {
        // Characters of a streamed string (with its quotes) are not held, so not counted.
        const start = i;
        const wasStreaming = this.streaming;
        i = this.scanString(s, i);
        if (wasStreaming) streamed += i - start;
        continue;
      }
      const c = s.charCodeAt(i);
      switch (this.state) {
        case 'before-object':
          if (isWhitespace(c)) break;
          if (c !== 0x7b) throw syntax('The body must be a JSON object, such as {"audio_base64": "…"}.');
          this.state = 'object-start';
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
            this.state = 'done';
            break;
          }
          throw syntax('The JSON body is malformed: a member name in double quotes was expected.');
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
            this.streaming = this.options.streamKeys.has(this.key);
            if (this.streaming) {
              streamed += 1;
              this.handler.streamStart(this.key);
            }
            i += 1;
            continue;
          }
          if (c === 0x7b || c === 0x5b) {
            throw new MurmurError('invalid_request', `\`${clip(this.key)}\` must be a single value, not an object or array.`, {
              param: clip(this.key),
            });
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
        case 'after-value':
          if (isWhitespace(c)) break;
          if (c === 0x2c) this.state = 'before-key';
          else if (c === 0x7d) this.state = 'done';
          else throw syntax('The JSON body is malformed: `,` or `}` was expected after a value.');
          break;
        case 'done':
          if (isWhitespace(c)) break;
          throw syntax('The JSON body has data after its closing `}`.');
      }
      i += 1;
    }
    this.flushPieces();
    this.held += n - streamed;
    if (this.held > this.options.maxHeldChars) throw this.tooLarge();
  }

  private tooLarge(): MurmurError {
    const inValue = this.state === 'string' || this.state === 'number' || this.state === 'literal';
    return new MurmurError('invalid_request', `The JSON fields other than the audio exceed ${formatChars(this.options.maxHeldChars)}.`, {
      param: inValue ? clip(this.key) : null,
    });
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
    if (this.text.length > this.options.maxHeldChars) throw this.tooLarge();
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
    this.handler.member(this.key, value);
  }
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
