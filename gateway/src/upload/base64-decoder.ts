/**
 * A streaming base64 decoder for `audio_base64`: text goes in piece by piece, split anywhere,
 * and the bytes come out as soon as whole quads are known, so a 670 MB value never sits in
 * memory. It accepts what real clients send, and nothing else:
 * - the standard and the URL-safe alphabet (even mixed, as Node's own decoder does);
 * - padding optional, but only at the very end, and only the amount the data needs;
 * - spaces, tabs, CR and LF anywhere (MIME line breaks), ignored;
 * - an optional data-URL prefix `data:<media type>[;param=value…];base64,` at the start, whose
 *   media type becomes the upload's content type.
 * Any other character, data after padding, or a dangling single character is
 * `invalid_request` naming the parameter. Non-zero trailing bits are ignored (as Node does).
 */
import { MurmurError } from '@murmur/contract';

const EMPTY: Buffer = Buffer.alloc(0);
const WHITESPACE = /[\t\n\r ]/;
const WHITESPACE_ALL = /[\t\n\r ]/g;
const NOT_BASE64 = /[^A-Za-z0-9+/\-_=]/;
const NOT_PADDING = /[^=]/;
const DATA_SCHEME = 'data:';
/** Longest data-URL prefix accepted (`data:audio/ogg;codecs=opus;base64,` is 34). */
const MAX_PREFIX = 256;
const TOKEN = '[A-Za-z0-9!#$&^_.+-]+';
const DATA_PREFIX = new RegExp(`^data:(?:(${TOKEN}/${TOKEN}(?:;${TOKEN}=[^;,]*)*))?;base64$`, 'i');

export interface Base64DecoderOptions {
  /** The parameter named in errors. */
  param: string;
  /** Accept a leading `data:…;base64,` (default true). */
  dataUrl?: boolean;
}

/** Decodes base64 text written in arbitrary pieces; `write` and `end` return the bytes now known. */
export class Base64Decoder {
  /** The media type of a data-URL prefix (with its parameters), once one has been read. */
  mediaType: string | undefined;
  private readonly param: string;
  /** Text held while it might still be the start of a data-URL prefix; null once decided. */
  private head: string | null;
  /** Base64 characters (0–3) that do not make a whole quad yet. */
  private carry = '';
  private dataChars = 0;
  private padding = 0;
  private ended = false;

  constructor(options: Base64DecoderOptions) {
    this.param = options.param;
    this.head = options.dataUrl === false ? null : '';
  }

  write(text: string): Buffer {
    if (this.ended) throw new Error('Base64Decoder: write after end');
    if (this.head !== null) {
      const body = this.takePrefix(this.head + text, false);
      if (body === null) return EMPTY;
      text = body;
    }
    return this.decode(text);
  }

  /** Flushes the last partial quad; throws if the text ended in a state base64 cannot end in. */
  end(): Buffer {
    if (this.ended) return EMPTY;
    let out: Buffer = EMPTY;
    if (this.head !== null) out = this.decode(this.takePrefix(this.head, true) ?? '');
    this.ended = true;
    const rest = this.dataChars % 4;
    if (rest === 1) throw this.invalid('it ends in the middle of a group of four characters');
    if (this.padding > 0 && this.padding !== 4 - rest) throw this.invalid('its `=` padding does not match its length');
    const tail = this.carry ? Buffer.from(this.carry, 'base64') : EMPTY;
    this.carry = '';
    return out.length === 0 ? tail : tail.length === 0 ? out : Buffer.concat([out, tail]);
  }

  /**
   * Decides whether `text` (everything seen so far) starts with a data-URL prefix. Returns the
   * base64 text after the prefix, or null while it cannot tell yet.
   */
  private takePrefix(text: string, final: boolean): string | null {
    const probe = text.slice(0, DATA_SCHEME.length).toLowerCase();
    if (!DATA_SCHEME.startsWith(probe) || (final && probe.length < DATA_SCHEME.length)) {
      this.head = null;
      return text;
    }
    if (probe.length < DATA_SCHEME.length) {
      this.head = text;
      return null;
    }
    const comma = text.indexOf(',');
    if (comma < 0 || comma > MAX_PREFIX) {
      if (final || text.length > MAX_PREFIX) {
        throw this.invalid('a data URL must look like `data:audio/mpeg;base64,` followed by the base64 text');
      }
      this.head = text;
      return null;
    }
    const match = DATA_PREFIX.exec(text.slice(0, comma));
    if (!match) throw this.invalid('a data URL must look like `data:audio/mpeg;base64,` followed by the base64 text');
    this.mediaType = match[1];
    this.head = null;
    return text.slice(comma + 1);
  }

  private decode(text: string): Buffer {
    if (text.length === 0) return EMPTY;
    if (this.padding === 0 && text.indexOf('=') < 0) {
      const fast = this.decodeCanonical(text);
      if (fast) return fast;
    }
    if (WHITESPACE.test(text)) text = text.replace(WHITESPACE_ALL, '');
    const bad = NOT_BASE64.exec(text);
    if (bad) throw this.invalid(`it contains ${describe(bad[0])}`);
    if (this.padding > 0) {
      if (NOT_PADDING.test(text)) throw this.invalid('it has data after the `=` padding');
      this.addPadding(text.length);
      return EMPTY;
    }
    const eq = text.indexOf('=');
    if (eq >= 0) {
      if (NOT_PADDING.test(text.slice(eq))) throw this.invalid('it has data after the `=` padding');
      this.addPadding(text.length - eq);
      text = text.slice(0, eq);
    }
    this.dataChars += text.length;
    const all = this.carry + text;
    const whole = all.length - (all.length % 4);
    this.carry = all.slice(whole);
    return whole === 0 ? EMPTY : Buffer.from(whole === all.length ? all : all.slice(0, whole), 'base64');
  }

  /**
   * The fast path for the usual case, clean base64 in one alphabet: decode the whole quads and
   * re-encode them; if that gives the same text back, every character was valid. Two native
   * passes instead of regular expressions over every character (several times faster).
   * Returns null when the text needs the careful path (whitespace, mixed or invalid characters).
   */
  private decodeCanonical(text: string): Buffer | null {
    const all = this.carry + text;
    const whole = all.length - (all.length % 4);
    const quads = whole === all.length ? all : all.slice(0, whole);
    const bytes = Buffer.from(quads, 'base64');
    if (bytes.toString('base64') !== quads && bytes.toString('base64url') !== quads) return null;
    if (whole < all.length && NOT_BASE64.test(all.slice(whole))) return null;
    this.dataChars += text.length;
    this.carry = all.slice(whole);
    return bytes;
  }

  private addPadding(n: number): void {
    this.padding += n;
    if (this.padding > 2) throw this.invalid('it has more than two `=` padding characters');
  }

  private invalid(why: string): MurmurError {
    return new MurmurError('invalid_request', `\`${this.param}\` is not valid base64: ${why}.`, { param: this.param });
  }
}

function describe(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  return code >= 0x21 && code < 0x7f ? `the character \`${ch}\`` : `the character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
