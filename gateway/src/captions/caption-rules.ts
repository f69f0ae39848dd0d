/**
 * The rules captions are cut by (issue 32): the usual broadcast limits, one place for each
 * number. `captionCues` takes any of them as options; these are the defaults every rendering
 * (`response_format=srt|vtt`) uses.
 */

export interface CaptionRules {
  /** Characters a line holds at most, the speaker's label included (graphemes, not bytes). */
  maxLineChars: number;
  /** Lines a cue holds at most. */
  maxLines: number;
  /** A shorter cue's end is pushed out to this, unless the next cue starts first. */
  minSeconds: number;
  /** No cue lasts longer, even one holding a single word that does. */
  maxSeconds: number;
}

export const CAPTION_RULES: Readonly<CaptionRules> = Object.freeze({ maxLineChars: 42, maxLines: 2, minSeconds: 1, maxSeconds: 7 });

/** A silence at least this long between two words is a good place to end a cue (or a line). */
export const CAPTION_PAUSE_SECONDS = 0.7;

/**
 * The speaker's label (`Name: `) takes at most this share of a line; a longer name is shortened
 * with `…` in the label, so a cue always has room for words.
 */
export const CAPTION_LABEL_SHARE = 0.5;

/** The rules with the caller's options applied; options that make no sense are a programming error. */
export function captionRulesOf(options: Partial<CaptionRules> = {}): CaptionRules {
  const rules = { ...CAPTION_RULES, ...options };
  const { maxLineChars, maxLines, minSeconds, maxSeconds } = rules;
  if (!Number.isInteger(maxLineChars) || maxLineChars < 8) throw new RangeError('maxLineChars must be an integer of at least 8');
  if (!Number.isInteger(maxLines) || maxLines < 1) throw new RangeError('maxLines must be an integer of at least 1');
  if (!Number.isFinite(maxSeconds) || maxSeconds < 0.5) throw new RangeError('maxSeconds must be at least 0.5');
  if (!Number.isFinite(minSeconds) || minSeconds < 0 || minSeconds > maxSeconds) throw new RangeError('minSeconds must be between 0 and maxSeconds');
  return rules;
}
