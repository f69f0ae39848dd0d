/**
 * The two caption file formats, written one way for every caller: SubRip (SRT, cues numbered
 * from 1, `HH:MM:SS,mmm`) and WebVTT (the `WEBVTT` header, `HH:MM:SS.mmm`). Callers hand over cue
 * text already made safe for the format; the escaping for WebVTT is here too.
 */

export interface CueBlock {
  start: number;
  end: number;
  /** The cue's text: one or more non-empty lines, joined by `\n`. */
  text: string;
}

/** `seconds` as `HH:MM:SS` and milliseconds after `separator`; hours grow past two digits. */
export function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const frac = ms % 1000;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(frac, 3)}`;
}

export function srtFile(cues: readonly CueBlock[]): string {
  return cues.map((c, i) => `${i + 1}\n${clock(c.start, ',')} --> ${clock(c.end, ',')}\n${c.text}\n`).join('\n');
}

export function vttFile(cues: readonly CueBlock[]): string {
  return ['WEBVTT\n', ...cues.map((c) => `${clock(c.start, '.')} --> ${clock(c.end, '.')}\n${c.text}\n`)].join('\n');
}

/**
 * Text as WebVTT cue text or a voice span's name: `&`, `<` and `>` become character references,
 * so no text opens a tag and none holds the `-->` of a timing line.
 */
export function escapeVtt(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** SubRip has no escapes; a `-->` in text, which readers take for a timing line, becomes `->`. */
export function srtSafe(text: string): string {
  return text.replace(/-->/g, '->');
}
