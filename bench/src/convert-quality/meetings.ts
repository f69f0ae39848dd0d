/**
 * The evaluation set of `npm run bench -- convert-quality`: public meeting transcripts with
 * references written by people, read from a local folder that scripts/fetch-convert-eval.js
 * fills (never committed).
 *
 * - `qmsum/{train,val,test}/<meeting>.json`: QMSum's product-design meetings (the AMI corpus's
 *   scenario meetings; QMSum is MIT-licensed, the AMI transcripts CC BY 4.0). Each holds the
 *   transcript as speaker turns, the speaker being the participant's role ("Project Manager",
 *   "Marketing", …), and a summary of the whole meeting written by an annotator.
 * - `ami/abstractive/<meeting>.abssumm.xml` (optional): the AMI manual annotations' abstractive
 *   summaries, whose `<actions>` section lists the meeting's action items as sentences
 *   ("The industrial designer will work on the working design.") and whose `<abstract>` is a
 *   second, independent summary.
 *
 * QMSum's own split decides the parts: `train` and `val` are the part rules may be tuned on,
 * `test` the part that is only measured.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where the set lives unless BENCH_EVAL_DIR says otherwise (git-ignored). */
export const DEFAULT_EVAL_DIR = path.resolve(__dirname, '..', '..', 'data', 'convert-quality');

export type Part = 'tune' | 'measure';

/** One reference action item: who (a role, or "Team") and what. */
export interface ReferenceAction {
  owners: string[];
  task: string;
  sentence: string;
}

export interface Meeting {
  id: string;
  part: Part;
  /** `Role: words` lines, annotation marks removed. */
  transcript: string;
  words: number;
  /** The annotator's summary of the whole meeting (QMSum). */
  summary: string;
  /** AMI's abstract, when the AMI annotations are present. */
  abstract: string | null;
  /** AMI's action items, when the AMI annotations are present (may be empty: no actions). */
  actions: ReferenceAction[] | null;
}

interface QmsumFile {
  general_query_list: { query: string; answer: string }[];
  meeting_transcripts: { speaker: string; content: string }[];
}

const PARTS: Record<string, Part> = { train: 'tune', val: 'tune', test: 'measure' };

/**
 * A QMSum turn as a person's transcript would read: without the corpus's markup for
 * non-speech ({vocalsound}, {disfmarker}, {gap}…) and with punctuation against its word.
 */
export function cleanTurn(content: string): string {
  return content
    .replace(/\{[a-z_]+\}/gi, ' ')
    .replace(/\s+([.,?!;:])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The transcript of a QMSum meeting as `Speaker: words` lines (turns with no words left out). */
export function transcriptOf(turns: QmsumFile['meeting_transcripts']): string {
  return turns
    .map((t) => ({ speaker: t.speaker.trim(), text: cleanTurn(t.content) }))
    .filter((t) => t.speaker && /[a-z]/i.test(t.text))
    .map((t) => `${t.speaker}: ${t.text}`)
    .join('\n');
}

const ROLES: [RegExp, string][] = [
  [/\bproject manager\b/i, 'Project Manager'],
  [/\bindustrial designer\b/i, 'Industrial Designer'],
  [/\buser interface(?: designer)?\b/i, 'User Interface'],
  [/\bmarketing(?: expert| executive| manager)?\b/i, 'Marketing'],
  [/\b(?:group|team|everyone|everybody|all|participants|they)\b/i, 'Team'],
];

/** The role an owner phrase names ("the marketing expert" → "Marketing"), or null. */
export function roleOf(phrase: string): string | null {
  for (const [re, role] of ROLES) if (re.test(phrase)) return role;
  return null;
}

/**
 * An AMI action sentence split into its owners and task: "The User Interface Designer and the
 * Industrial Designer will build the prototype." → owners [User Interface, Industrial Designer],
 * task "build the prototype". A sentence with no recognisable owner counts as the team's.
 */
export function parseActionSentence(sentence: string): ReferenceAction {
  const text = sentence.replace(/\s+/g, ' ').trim();
  const m = /^(.*?)\b(?:will|would|should|must|are to|is to|is going to|are going to|need to|needs to|has to|have to|were asked to|was asked to|is responsible for|are responsible for)\b\s+(.*)$/i.exec(text);
  const subject = m ? m[1]! : '';
  const task = (m ? m[2]! : text).replace(/[.\s]+$/, '');
  const owners = subject
    .split(/,|\band\b/i)
    .map((part) => roleOf(part))
    .filter((r): r is string => r !== null);
  return { owners: owners.length > 0 ? [...new Set(owners)] : ['Team'], task, sentence: text };
}

function decodeXml(s: string): string {
  return s
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The sentences of one section (`abstract`, `actions`, …) of an AMI `.abssumm.xml` file. */
export function abssummSection(xml: string, section: 'abstract' | 'actions' | 'decisions' | 'problems'): string[] {
  const block = new RegExp(`<${section}\\b[^>]*>([\\s\\S]*?)</${section}>`, 'i').exec(xml);
  if (!block) return [];
  return [...block[1]!.matchAll(/<sentence\b[^>]*>([\s\S]*?)<\/sentence>/gi)].map((s) => decodeXml(s[1]!)).filter((s) => s.length > 0);
}

/** Every meeting of the set under `dir`; throws with what to run when the folder is empty. */
export function loadMeetings(dir: string): Meeting[] {
  const qmsum = path.join(dir, 'qmsum');
  if (!fs.existsSync(qmsum)) {
    throw new Error(`no evaluation set at ${dir}: run \`node scripts/fetch-convert-eval.js\` first (or set BENCH_EVAL_DIR)`);
  }
  const meetings: Meeting[] = [];
  for (const [folder, part] of Object.entries(PARTS)) {
    const partDir = path.join(qmsum, folder);
    if (!fs.existsSync(partDir)) continue;
    for (const file of fs.readdirSync(partDir).filter((f) => f.endsWith('.json')).sort()) {
      const id = file.replace(/\.json$/, '');
      const data = JSON.parse(fs.readFileSync(path.join(partDir, file), 'utf8')) as QmsumFile;
      const whole = data.general_query_list.find((q) => /whole meeting/i.test(q.query)) ?? data.general_query_list[0];
      const transcript = transcriptOf(data.meeting_transcripts);
      const abssumm = path.join(dir, 'ami', 'abstractive', `${id}.abssumm.xml`);
      const xml = fs.existsSync(abssumm) ? fs.readFileSync(abssumm, 'utf8') : null;
      meetings.push({
        id,
        part,
        transcript,
        words: transcript.split(/\s+/).length,
        summary: whole?.answer ?? '',
        abstract: xml ? abssummSection(xml, 'abstract').join(' ') : null,
        actions: xml ? abssummSection(xml, 'actions').map(parseActionSentence) : null,
      });
    }
  }
  if (meetings.length === 0) throw new Error(`no meetings under ${qmsum}: run \`node scripts/fetch-convert-eval.js\` again`);
  return meetings;
}
