/**
 * The engine capability table (docs/timelines.md, "Engines"): what each engine can do beyond
 * text. The engines and ListEngines both read it, so what is published is what runs.
 */
import type { EngineCapabilities } from './engine';

export const ENGINE_CAPABILITIES = {
  /** Word times and posterior probabilities (`-time yes`); English only; its dictionary bounds key terms. */
  pocketsphinx: { words: true, languageDetection: false, keyterms: 'dictionary' },
  /** Token timestamps joined into words (no confidence from the binding); multilingual models detect the language. */
  whisper: { words: true, languageDetection: true, keyterms: 'prompt' },
  /** `timestamp_granularities[]=word` where the server has it (MURMUR_OPENAI_WORDS); verbose_json's language. */
  openai: { words: true, languageDetection: true, keyterms: 'prompt' },
} as const satisfies Record<string, EngineCapabilities>;

/** whisper: an English-only model (`*.en`) detects nothing. */
export function whisperCapabilities(model: string): EngineCapabilities {
  return { ...ENGINE_CAPABILITIES.whisper, languageDetection: !/\.en(\b|$)/.test(model) };
}

/** openai: words only from a server that has them. */
export function openAiCapabilities(words: boolean): EngineCapabilities {
  return { ...ENGINE_CAPABILITIES.openai, words };
}
