/**
 * A call's timeline options (murmur.timeline.v1.TimelineOptions), checked before any audio is
 * read or any credit is held: the contract's rules (key terms, speakers), then what the engine
 * and this process can do (word times, a dictionary, the diarization models). Every refusal is
 * invalid_request naming the option and, where it is the cause, the engine.
 */
import { invalidParam, keytermsOf, redactionOptionsOf, speakersExpectedOf, type RedactionOptions } from '@murmur/contract';
import type { timeline } from '@murmur/proto';
import { capabilitiesOf, type SpeechEngine } from './engines/engine';
import type { DiarizationPort } from './diarization/port';
import { DIARIZATION_FETCH_COMMAND } from './diarization/models';

/** Who finds speakers; absent or with missing models, `diarize` is refused. */
export type { DiarizationPort } from './diarization/port';

export interface CheckedTimelineOptions {
  words: boolean;
  diarize: boolean;
  speakersExpected: number;
  keyterms: string[];
  /** What to redact and how; null: nothing. */
  redaction: RedactionOptions | null;
}

export const NO_TIMELINE_OPTIONS: CheckedTimelineOptions = { words: false, diarize: false, speakersExpected: 0, keyterms: [], redaction: null };

export async function checkTimelineOptions(
  engine: SpeechEngine,
  o: timeline.TimelineOptions | undefined,
  diarization: DiarizationPort | undefined,
): Promise<CheckedTimelineOptions> {
  const caps = capabilitiesOf(engine);
  if (!o) return NO_TIMELINE_OPTIONS;
  if (o.words && !caps.words) {
    throw invalidParam('words', `The ${engine.name} engine gives no word times, so \`words\` cannot be answered. Send the request without \`words\` (the engine table is in docs/timelines.md).`);
  }
  const speakersExpected = speakersExpectedOf(o.speakersExpected, o.diarize);
  if (o.diarize) {
    const missing = diarization ? diarization.missing() : ['the speaker diarization models (none configured)'];
    if (missing.length > 0) {
      throw invalidParam('diarize', `Speaker diarization is not available on this server: missing ${missing.join(', ')} (an operator installs them with \`${DIARIZATION_FETCH_COMMAND}\`). Send the request without \`diarize\`.`);
    }
  }
  const keyterms = keytermsOf(o.keyterms);
  if (keyterms.length > 0 && caps.keyterms === 'dictionary') {
    const unknown = engine.unknownWords ? await engine.unknownWords(keyterms) : [];
    if (unknown.length > 0) {
      const shown = unknown.slice(0, 5).map((w) => `"${w}"`).join(', ');
      throw invalidParam(
        'keyterms',
        `The ${engine.name} engine cannot recognise ${shown}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}: ${unknown.length === 1 ? 'it is' : 'they are'} not in its dictionary. Remove ${unknown.length === 1 ? 'it' : 'them'} from \`keyterms\` (the whisper and openai engines take any term).`,
      );
    }
  }
  // The wire cannot tell "absent" from empty: an empty list or style is "not given".
  const redaction = redactionOptionsOf({
    redact_pii: o.redactPii,
    redact_pii_policies: o.redactPiiPolicies.length > 0 ? o.redactPiiPolicies : undefined,
    redact_pii_sub: o.redactPiiSub || undefined,
  });
  return { words: o.words, diarize: o.diarize, speakersExpected, keyterms, redaction };
}
