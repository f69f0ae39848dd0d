/**
 * A call's timeline options (murmur.timeline.v1.TimelineOptions), checked before any audio is
 * read or any credit is held: the contract's rules (key terms, speakers), then what the engine
 * and this process can do (word times, a dictionary, the diarization models). Every refusal is
 * invalid_request naming the option and, where it is the cause, the engine.
 */
import { AUTO_LANGUAGE, invalidParam, keytermsOf, speakersExpectedOf } from '@murmur/contract';
import type { timeline } from '@murmur/proto';
import { capabilitiesOf, type SpeechEngine } from './engines/engine';

/** Who finds speakers; absent or with missing models, `diarize` is refused. */
export interface DiarizationPort {
  /** The model files that are missing (empty when diarization can run). */
  missing(): string[];
}

export interface CheckedTimelineOptions {
  words: boolean;
  diarize: boolean;
  speakersExpected: number;
  keyterms: string[];
  /** `language: "auto"`: the engine detects it (and says how sure it is, where it can). */
  detectLanguage: boolean;
}

export const NO_TIMELINE_OPTIONS: CheckedTimelineOptions = { words: false, diarize: false, speakersExpected: 0, keyterms: [], detectLanguage: false };

export async function checkTimelineOptions(
  engine: SpeechEngine,
  o: timeline.TimelineOptions | undefined,
  language: string,
  diarization: DiarizationPort | undefined,
): Promise<CheckedTimelineOptions> {
  const caps = capabilitiesOf(engine);
  const detectLanguage = language === AUTO_LANGUAGE;
  if (!o) return { ...NO_TIMELINE_OPTIONS, detectLanguage };
  if (o.words && !caps.words) {
    throw invalidParam('words', `The ${engine.name} engine gives no word times, so \`words\` cannot be answered. Send the request without \`words\` (the engine table is in docs/timelines.md).`);
  }
  const speakersExpected = speakersExpectedOf(o.speakersExpected, o.diarize);
  if (o.diarize) {
    const missing = diarization ? diarization.missing() : ['the speaker diarization models (none configured)'];
    if (missing.length > 0) {
      throw invalidParam('diarize', `Speaker diarization is not available here: missing ${missing.join(', ')}. An operator installs them with \`npm run models -- diarization\`; until then send the request without \`diarize\`.`);
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
  if (o.redactPii || o.redactPiiPolicies.length > 0 || o.redactPiiSub) {
    throw invalidParam('redact_pii', 'PII redaction is not available on this replica yet.');
  }
  return { words: o.words, diarize: o.diarize, speakersExpected, keyterms, detectLanguage };
}
