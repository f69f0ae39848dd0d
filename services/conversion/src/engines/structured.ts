/**
 * What the LLM engines share: the prompt for a kind, the JSON schema its answer must follow,
 * and the path from the model's JSON text to the finished artifact — parsed, checked against
 * the kind's shape ({@link parseArtifact}) and written by the same renderers as the local
 * engine. Only the call to the model differs between llama and openai.
 */
import { artifactJsonSchema, parseArtifact, UnusableOutputError, type Artifact } from '../artifacts';
import { KINDS, type KindName } from '../kinds';
import { isoDate, withWeekday } from '../nlp/dates';
import { parseInstructions } from '../nlp/instructions';
import { EngineError, type EngineInput } from './engine';

/** Most characters of instructions passed to a model. */
const MAX_INSTRUCTIONS = 2_000;

const GUIDANCE: Record<KindName, string> = {
  summary: 'title: a short title for the recording. sentences: a faithful summary in complete sentences, most important first within the order things were said; about 3 to 10 sentences depending on the length of the transcript unless the instructions ask otherwise.',
  key_points: 'title: a short title. points: the key points as short, self-contained statements, 3 to 12 of them.',
  action_items: 'items: every commitment or task in the transcript, each with owner, task (starting with a verb) and due. An empty list when there is none.',
  email: 'A follow-up email about the transcript. subject: "Recap: …". greeting: e.g. "Hi all," or "Hi Priya,". opening: one sentence. keyPoints: 2 to 7 points. actionItems: the action items. closing: one sentence. signOff: e.g. "Best,". signature: "[Your name]" unless the instructions name the sender.',
  spreadsheet: 'A table. By default the action items with columns ["Owner", "Task", "Due"] (Due as YYYY-MM-DD or ""); when there are none, the key points with columns ["#", "Key point"]. Every row has one cell per column. title: what the table holds.',
  meeting_notes: 'title: "Meeting notes: <topic>". date: the reference date. attendees: speaker labels of the transcript (empty when there are none). peopleMentioned: other people named. discussion: the main points discussed. decisions: what was agreed or decided. actionItems: the action items.',
};

/** The system and user messages for one conversion. */
export function buildPrompt(input: Pick<EngineInput, 'transcript' | 'kind' | 'instructions' | 'referenceTime'>): { system: string; user: string } {
  const kind = KINDS.find((k) => k.name === input.kind)!;
  const instructions = input.instructions.trim().slice(0, MAX_INSTRUCTIONS);
  const system = [
    `You turn transcripts of voice notes and meetings into artifacts. The artifact to write: ${kind.name} — ${kind.description}`,
    'Answer with one JSON object that follows the given JSON schema and nothing else.',
    'Use only facts stated in the transcript; never invent names, numbers or dates. Write in the language of the transcript.',
    'An owner is the person named in the transcript; "Speaker" for the person talking when they say "I", and "Team" for "we".',
    `Due dates are YYYY-MM-DD, worked out relative to the reference date ${withWeekday(isoDate(input.referenceTime))}; "" when no deadline was said.`,
    GUIDANCE[input.kind],
    instructions ? `Instructions from the user (follow them unless they contradict the rules above): ${instructions}` : '',
  ]
    .filter(Boolean)
    .join('\n');
  return { system, user: `Transcript:\n"""\n${input.transcript}\n"""` };
}

/** The JSON schema a model's answer for `kind` must follow. */
export function schemaFor(kind: KindName): Record<string, unknown> {
  return artifactJsonSchema(kind);
}

/**
 * The artifact of a model's JSON answer: parsed, checked and normalised.
 * Throws {@link EngineError} when the answer is not JSON or not usable.
 */
export function modelArtifact(answer: string, input: Pick<EngineInput, 'kind' | 'instructions' | 'referenceTime'>): Artifact {
  let value: unknown;
  try {
    value = JSON.parse(answer);
  } catch (err) {
    throw new EngineError(`the model's answer is not JSON (${answer.length} characters)`, { cause: err });
  }
  try {
    return parseArtifact(input.kind, value, { reference: input.referenceTime, bullets: parseInstructions(input.instructions).bullets });
  } catch (err) {
    if (err instanceof UnusableOutputError) throw new EngineError(`unusable model output: ${err.message}`, { cause: err });
    throw err;
  }
}
