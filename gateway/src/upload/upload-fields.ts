/**
 * The options of POST /transcribe as they arrive in a body (multipart text fields or JSON
 * members): names, types and allowed values, shared by both body kinds.
 *
 * Order: any. The audio is handed on while it still arrives, and only `language` is needed
 * before recognition starts; `response_format`, `save`, `title` and `folder_id` are applied
 * after it, so an option after the audio simply joins the others (checked, with everything
 * else, when the body ends and before any paid work). Whether `language` was settled before the
 * audio is recorded: when it was not, a `language` after the audio is still honoured (see
 * transcribe-route.ts). Unknown or repeated options are `invalid_request` naming them.
 */
import { MurmurError, invalidParam } from '@murmur/contract';
import { transcriptFormatOf } from '../operations/transcript-formats';

/** The options of a transcription upload, as read from the body. */
export interface AudioUploadFields {
  language?: string;
  response_format?: string;
  save?: boolean;
  title?: string;
  folder_id?: string;
  /** The audio by URL instead of in the body (then the body holds only options). */
  audio_url?: string;
  /** Jobs only: where the job's end is delivered. */
  webhook_url?: string;
  /** The timeline options (docs/timelines.md). */
  words?: boolean;
  diarize?: boolean;
  speakers_expected?: number;
  keyterms?: string[];
  redact_pii?: boolean;
  redact_pii_policies?: string[];
  redact_pii_sub?: string;
}

export type OptionName = keyof AudioUploadFields;

export const OPTION_NAMES: readonly OptionName[] = [
  'language', 'response_format', 'save', 'title', 'folder_id', 'audio_url', 'webhook_url',
  'words', 'diarize', 'speakers_expected', 'keyterms', 'redact_pii', 'redact_pii_policies', 'redact_pii_sub',
];

/** Options that are true or false. */
const BOOLEAN_OPTIONS: ReadonlySet<OptionName> = new Set(['save', 'words', 'diarize', 'redact_pii']);
/** Options that are lists: a JSON array (or one string), or a multipart field repeated once per entry. */
const LIST_OPTIONS: ReadonlySet<OptionName> = new Set(['keyterms', 'redact_pii_policies']);
/** Options that are whole numbers. */
const INTEGER_OPTIONS: ReadonlySet<OptionName> = new Set(['speakers_expected']);

export function isListOption(name: string): boolean {
  return LIST_OPTIONS.has(name as OptionName);
}


export function isOptionName(name: string): name is OptionName {
  return (OPTION_NAMES as readonly string[]).includes(name);
}

/** Collects options in body order, wherever the audio falls among them. */
export class UploadFieldSet {
  /** Every option read so far: complete once the body has been read. */
  readonly fields: AudioUploadFields = {};
  /** True once `language` (set or empty) has been read: it can no longer change. */
  get languageKnown(): boolean {
    return this.seen.has('language');
  }
  private readonly seen = new Set<string>();

  constructor(private readonly audioParam: string) {}

  /** Records one option; `value` undefined means unset (empty or null). A list option's entries are added one by one. */
  set(name: string, value: string | boolean | number | undefined): void {
    if (!isOptionName(name)) throw unknownOption(name, this.audioParam);
    if (LIST_OPTIONS.has(name)) {
      this.seen.add(name);
      if (value === undefined) return;
      const list = ((this.fields as Record<string, unknown>)[name] as string[] | undefined) ?? [];
      if (list.length >= 100) throw invalidParam(name, `\`${name}\` has too many entries.`);
      list.push(String(value));
      (this.fields as Record<string, unknown>)[name] = list;
      return;
    }
    if (this.seen.has(name)) throw invalidParam(name, `\`${name}\` is given more than once.`);
    this.seen.add(name);
    if (value !== undefined) (this.fields as Record<string, unknown>)[name] = value;
  }
}

/** A multipart text field: strings as sent; booleans are true/false/1/0, integers digits; empty means unset. */
export function optionFromText(name: OptionName, raw: string): string | boolean | number | undefined {
  if (raw === '') return undefined;
  if (BOOLEAN_OPTIONS.has(name)) {
    const v = raw.toLowerCase();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw invalidParam(name, `\`${name}\` must be true or false (or 1 or 0).`);
  }
  if (INTEGER_OPTIONS.has(name)) {
    if (!/^\d{1,6}$/.test(raw)) throw invalidParam(name, `\`${name}\` must be a whole number.`);
    return Number(raw);
  }
  return checkString(name, raw);
}

/** A JSON member: strings for text options, JSON booleans and integers for the others; null or "" means unset. */
export function optionFromJson(name: OptionName, value: string | number | boolean | null): string | boolean | number | undefined {
  if (value === null || value === '') return undefined;
  if (BOOLEAN_OPTIONS.has(name)) {
    if (typeof value !== 'boolean') throw invalidParam(name, `\`${name}\` must be a JSON boolean (true or false).`);
    return value;
  }
  if (INTEGER_OPTIONS.has(name)) {
    if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidParam(name, `\`${name}\` must be a whole number.`);
    return value;
  }
  if (typeof value !== 'string') throw invalidParam(name, `\`${name}\` must be a string.`);
  return checkString(name, value);
}

function checkString(name: OptionName, value: string): string {
  if (name === 'response_format') transcriptFormatOf(value);
  return value;
}

function unknownOption(name: string, audioParam: string): MurmurError {
  const hint =
    name === 'audio_base64' ? ' `audio_base64` is for JSON bodies; in multipart send the file as `audio`.'
    : name === 'audio' ? ' In JSON send the audio as `audio_base64`.'
    : '';
  const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return invalidParam(shown, `Unknown field \`${shown}\`. Allowed: ${audioParam}, ${OPTION_NAMES.join(', ')}.${hint}`);
}
