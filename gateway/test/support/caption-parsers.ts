/**
 * Readers for the caption files the gateway writes, to prove they read back as written. SubRip
 * has no formal grammar, so its reader here is strict (numbering from 1, `HH:MM:SS,mmm`, one
 * blank line between cues, no blank or timing-like line in a cue's text). WebVTT is read by the
 * W3C's own parser and validator (webvtt-parser, from w3c/webvtt.js), with its full HTML entity
 * table: its built-in table has only the forms without `;` and decodes `&lt;` as `<;`.
 */
import { WebVTTParser, type Entity, type TreeNode } from 'webvtt-parser';
const htmlEntities = require('webvtt-parser/html-entities.json') as Record<Entity, string>;

export interface ReadCue {
  start: number;
  end: number;
  lines: string[];
}

const SRT_TIME = /^(\d{2,}):([0-5]\d):([0-5]\d),(\d{3}) --> (\d{2,}):([0-5]\d):([0-5]\d),(\d{3})$/;

/** The cues of an SRT file; throws on anything a strict reader would refuse. */
export function readSrt(srt: string): ReadCue[] {
  if (srt === '') return [];
  if (!srt.endsWith('\n') || srt.endsWith('\n\n')) throw new Error('SRT must end with one line break');
  return srt
    .slice(0, -1)
    .split('\n\n')
    .map((block, i) => {
      const [number, timing, ...lines] = block.split('\n');
      if (number !== String(i + 1)) throw new Error(`cue ${i + 1}: number line is ${JSON.stringify(number)}`);
      const m = SRT_TIME.exec(timing ?? '');
      if (!m) throw new Error(`cue ${i + 1}: timing line is ${JSON.stringify(timing)}`);
      const t = m.slice(1).map(Number) as [number, number, number, number, number, number, number, number];
      if (lines.length === 0) throw new Error(`cue ${i + 1}: no text`);
      for (const line of lines) {
        if (line.trim() === '') throw new Error(`cue ${i + 1}: blank line in text`);
        if (line.includes('-->')) throw new Error(`cue ${i + 1}: "-->" in text`);
      }
      return { start: t[0] * 3600 + t[1] * 60 + t[2] + t[3] / 1000, end: t[4] * 3600 + t[5] * 60 + t[6] + t[7] / 1000, lines };
    });
}

export interface ReadVttCue extends ReadCue {
  /** The voice span's name, decoded, when the cue is one voice span. */
  voice: string | null;
}

/** The cues of a WebVTT file; throws with the validator's errors when it has any. */
export function readVtt(vtt: string): ReadVttCue[] {
  if (!/^WEBVTT\n(\n|$)/.test(vtt)) throw new Error('WebVTT must start with "WEBVTT" and a blank line');
  const { cues, errors } = new WebVTTParser(htmlEntities).parse(vtt, 'subtitles');
  if (errors.length > 0) throw new Error(`WebVTT errors: ${JSON.stringify(errors)}`);
  return cues.map((c) => {
    if (c.id !== '') throw new Error(`cue with an id: ${c.id}`);
    const [only, ...more] = c.tree.children;
    const voice = only?.type === 'object' && only.name === 'v' && more.length === 0 ? only : null;
    const text = textOf(voice ? voice.children : c.tree.children);
    return { start: c.startTime, end: c.endTime, lines: text.split('\n'), voice: voice ? decodeAnnotation(voice.value) : null };
  });
}

function textOf(nodes: readonly TreeNode[]): string {
  return nodes
    .map((n) => {
      if (n.type !== 'text') throw new Error(`unexpected ${n.type} node in cue text: ${JSON.stringify(n)}`);
      return n.value;
    })
    .join('');
}

/** The parser keeps a voice's annotation as written; the name is the annotation decoded. */
function decodeAnnotation(annotation: string): string {
  if (/&(?!(amp|lt|gt);)/.test(annotation)) throw new Error(`bare "&" in annotation ${annotation}`);
  return annotation.replace(/&(amp|lt|gt);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>' })[e] ?? '');
}
