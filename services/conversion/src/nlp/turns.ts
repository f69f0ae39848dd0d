/**
 * Speaker turns. Transcripts come either as running text (a voice note, or a meeting recorded
 * without diarisation) or as "Name: words" lines from a diarising recorder, possibly with
 * timestamps. Labels are trusted only when most lines carry one, so a note that merely
 * contains "Note to self:" or "Action item:" stays running text.
 */

/** One stretch of speech; `speaker` is null for running text. */
export interface Turn {
  speaker: string | null;
  text: string;
}

const TIMESTAMP = String.raw`(?:[\[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?[\])]?)`;
const LABEL = String.raw`((?:[A-Z][\p{L}'’.-]*)(?:\s+(?:[A-Z][\p{L}'’.-]*|\d{1,2})){0,2})`;
const LINE = new RegExp(String.raw`^\s*(?:${TIMESTAMP}\s*[-–]?\s*)?${LABEL}\s*(?:${TIMESTAMP})?\s*:\s+(\S.*)$`, 'u');
const LEADING_TIMESTAMP = new RegExp(String.raw`^\s*${TIMESTAMP}\s*[-–]?\s*`, 'u');

/** Words that end in a colon in ordinary notes and are not speakers. */
const NOT_LABELS = new Set([
  'note', 'notes', 'note to self', 'action item', 'action items', 'action item for me', 'todo', 'to do', 'update',
  'summary', 'agenda', 'question', 'answer', 'decision', 'decisions', 'next steps', 'goal', 'risk', 'priority',
  'budget', 'idea', 'ideas', 'subject', 're', 'ps', 'p.s.', 'reminder', 'important', 'edit', 'quote', 'for groceries',
]);

/** The share of non-empty lines that must carry a label before labels are believed. */
const LABELLED_SHARE = 0.6;

/**
 * Splits `text` into turns. Consecutive lines of one speaker become one turn; lines without a
 * label continue the previous turn. Unlabelled text is one turn per paragraph.
 */
export function splitTurns(text: string): Turn[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const nonEmpty = lines.filter((l) => l.trim() !== '');
  const parsed = lines.map((line) => {
    const m = LINE.exec(line);
    if (!m || NOT_LABELS.has(m[1]!.toLowerCase())) return null;
    return { speaker: m[1]!.trim(), text: m[2]!.trim() };
  });
  const labelled = parsed.filter((p) => p !== null).length;
  if (nonEmpty.length === 0) return [];
  if (labelled < 2 || labelled / nonEmpty.length < LABELLED_SHARE) {
    return text
      .replace(/\r\n?/g, '\n')
      .split(/\n\s*\n/)
      .map((p) => p.split('\n').map((l) => l.replace(LEADING_TIMESTAMP, '')).join(' ').replace(/\s+/g, ' ').trim())
      .filter((p) => p !== '')
      .map((p) => ({ speaker: null, text: p }));
  }
  const turns: Turn[] = [];
  lines.forEach((line, i) => {
    const p = parsed[i];
    const last = turns[turns.length - 1];
    if (p) {
      if (last && last.speaker === p.speaker) last.text += ` ${p.text}`;
      else turns.push({ speaker: p.speaker, text: p.text });
    } else if (line.trim() !== '') {
      const rest = line.replace(LEADING_TIMESTAMP, '').trim();
      if (last) last.text += ` ${rest}`;
      else turns.push({ speaker: null, text: rest });
    }
  });
  return turns;
}
