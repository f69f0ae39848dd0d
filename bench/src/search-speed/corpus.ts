/**
 * Synthetic meeting transcripts for search-speed: English-looking speech with the statistics
 * that decide how full-text search performs — word frequencies that follow Zipf's law over a
 * large vocabulary (a head of spoken function words, then meeting vocabulary, then a long tail),
 * words that cluster in the meeting that is about them (each transcript has its own topic words),
 * common two-word phrases, sentences of a few seconds as segments, and several speakers taking
 * turns of a minute or two. Deterministic: the same seed gives the same transcript.
 *
 * The tail is made of pronounceable non-words (syllables), so no word list is needed; Postgres's
 * English stemmer treats them like any other word.
 */

/** A deterministic 32-bit PRNG (mulberry32): uniform in [0, 1). */
export function randomOf(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The most frequent words of spoken English, roughly in order (most are Postgres stop words). */
const HEAD = `the I and you to that a it of we so in is yeah like know is just this it's have be
 okay um uh think they for what on do was not with but are right don't can there if well at
 going all about get one me my he would or go because um really then mean I'm people them from
 that's some will no our out an as time think see she how yes had when more were say said
 things lot good also up very maybe need now kind actually want could your which other where
 sure thing two first make back any work here oh different look something even way those`
  .split(/\s+/)
  .filter(Boolean);

/** Meeting vocabulary, after the head. */
const MEETING = `team project customer week meeting budget design product release plan data
 review issue feature question process users test idea point quarter sales number change
 problem market support price report month year call deadline version update goal cost
 feedback client client's decision launch contract schedule risk demo server email office
 training hiring manager engineer marketing finance legal analysis research strategy prototype
 interface battery screen phone app website page account order payment invoice delivery
 shipping warehouse stock supplier vendor partner revenue profit margin forecast target metric
 dashboard survey interview workshop presentation slide document draft template proposal
 agreement policy security privacy compliance audit backup database migration deployment
 pipeline build bug fix patch ticket backlog sprint estimate priority scope requirement spec
 architecture performance latency memory storage network cloud cluster service api endpoint
 integration testing quality incident outage monitoring alert logging error crash recovery
 upgrade license pricing discount campaign brand content social video podcast event conference
 travel hotel flight expense approval headcount salary bonus benefit holiday vacation
 onboarding mentor career promotion feedback session calendar agenda minutes notes action
 follow owner status progress blocker dependency milestone timeline roadmap vision mission
 value culture diversity wellbeing office remote hybrid commute parking kitchen coffee lunch
 friday monday tuesday wednesday thursday morning afternoon evening tomorrow yesterday today
 europe asia america london paris berlin tokyo region country city store retail online mobile
 desktop tablet laptop printer camera microphone speaker headset cable charger adapter`
  .split(/\s+/)
  .filter(Boolean);

/** Two-word phrases people say often in meetings (their words are meeting vocabulary). */
export const PHRASES = [
  'next week', 'action item', 'release date', 'customer feedback', 'design review', 'sales team',
  'budget review', 'product launch', 'user research', 'support ticket', 'quarterly report', 'team meeting',
];

const ONSETS = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'dr', 'gl', 'kr', 'pl', 'st', 'tr', 'sh', 'ch', 'th'];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ea'];

/** Distinct syllable triples: the most tail words there can be. */
const TAIL_WORDS = (ONSETS.length * NUCLEI.length) ** 3;

/**
 * The `i`-th tail word: three syllables picked by the digits of `i` scrambled (a bijection of
 * 0…{@link TAIL_WORDS} − 1, so neighbours in rank do not share their endings); distinct for every
 * `i` below TAIL_WORDS.
 */
export function tailWord(i: number): string {
  const syllables = ONSETS.length * NUCLEI.length;
  const n = (i * 7919 + 13) % TAIL_WORDS;
  const syllable = (k: number) => ONSETS[k % ONSETS.length]! + NUCLEI[Math.floor(k / ONSETS.length)]!;
  return syllable(n % syllables) + syllable(Math.floor(n / syllables) % syllables) + syllable(Math.floor(n / syllables ** 2));
}

export interface CorpusOptions {
  /** Distinct words (head, meeting vocabulary, tail). */
  vocabulary: number;
  /** Zipf exponent: the word of rank r is said with probability ∝ 1 / r^s. */
  zipf: number;
  /** Words each transcript is about, drawn from the tail, and their share of its words. */
  topicWords: number;
  topicShare: number;
  /** Share of words that start one of {@link PHRASES}. */
  phraseShare: number;
  /** Speakers per transcript and the mean number of sentences a turn holds. */
  speakers: number;
  sentencesPerTurn: number;
}

export const DEFAULT_CORPUS: CorpusOptions = { vocabulary: 200_000, zipf: 1.0, topicWords: 30, topicShare: 0.03, phraseShare: 0.005, speakers: 4, sentencesPerTurn: 16 };

export interface Segment {
  startSeconds: number;
  endSeconds: number;
  text: string;
  speaker: string;
}

export interface SyntheticTranscript {
  text: string;
  segments: Segment[];
  speakers: string[];
  words: number;
}

/** The vocabulary by rank (1-based rank r is `words[r - 1]`) and a sampler of ranks by Zipf's law. */
export class Corpus {
  readonly words: string[];
  private readonly cdf: Float64Array;

  constructor(readonly opts: CorpusOptions = DEFAULT_CORPUS) {
    const seen = new Set<string>();
    const words: string[] = [];
    const take = (w: string) => {
      if (seen.has(w)) return;
      seen.add(w);
      words.push(w);
    };
    for (const w of [...HEAD, ...MEETING]) take(w);
    for (let i = 0; words.length < opts.vocabulary && i < TAIL_WORDS; i++) take(tailWord(i));
    this.words = words;
    this.cdf = new Float64Array(words.length);
    let total = 0;
    for (let r = 1; r <= words.length; r++) this.cdf[r - 1] = total += 1 / r ** opts.zipf;
    for (let i = 0; i < words.length; i++) this.cdf[i]! /= total;
  }

  /** Rank (1-based) of the first word of the tail: words ranked from here on are non-words. */
  get tailStart(): number {
    return new Set([...HEAD, ...MEETING]).size + 1;
  }

  /** The rank of a word, 1-based (0 when not in the vocabulary). */
  rankOf(word: string): number {
    return this.words.indexOf(word) + 1;
  }

  /** The probability that one word said is the word of rank `r` (without topics and phrases). */
  probability(r: number): number {
    return this.cdf[r - 1]! - (r > 1 ? this.cdf[r - 2]! : 0);
  }

  /** A rank drawn by Zipf's law. */
  sample(random: () => number): number {
    const u = random();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  }

  /**
   * A transcript of `words` words spoken at `secondsPerWord`: sentences of 6–22 words, one
   * segment each; speakers S1…Sn taking turns of about {@link CorpusOptions.sentencesPerTurn}
   * sentences (geometric), never the same speaker twice in a row.
   */
  transcript(seed: number, words: number, secondsPerWord: number): SyntheticTranscript {
    const random = randomOf(seed);
    const { topicWords, topicShare, phraseShare, speakers, sentencesPerTurn } = this.opts;
    const tail = this.words.length - this.tailStart + 1;
    const topics = Array.from({ length: topicWords }, () => this.words[this.tailStart - 1 + Math.floor(random() * tail)]!);
    const speakerIds = Array.from({ length: speakers }, (_, i) => `S${i + 1}`);
    const segments: Segment[] = [];
    const texts: string[] = [];
    let said = 0;
    let speaker = 0;
    let turnLeft = 0;
    while (said < words) {
      if (turnLeft <= 0) {
        speaker = segments.length === 0 ? 0 : (speaker + 1 + Math.floor(random() * (speakers - 1))) % speakers;
        turnLeft = Math.max(1, Math.round(-Math.log(1 - random()) * sentencesPerTurn));
      }
      const length = Math.min(words - said, 6 + Math.floor(random() * 17));
      const sentence: string[] = [];
      while (sentence.length < length) {
        const u = random();
        if (u < phraseShare && sentence.length + 2 <= length) sentence.push(...PHRASES[Math.floor(random() * PHRASES.length)]!.split(' '));
        else if (u < phraseShare + topicShare) sentence.push(topics[Math.floor(random() * topics.length)]!);
        else sentence.push(this.words[this.sample(random) - 1]!);
      }
      sentence[0] = sentence[0]!.charAt(0).toUpperCase() + sentence[0]!.slice(1);
      const text = `${sentence.join(' ')}${random() < 0.1 ? '?' : '.'}`;
      const start = Math.round(said * secondsPerWord * 1000) / 1000;
      said += sentence.length;
      segments.push({ startSeconds: start, endSeconds: Math.round(said * secondsPerWord * 1000) / 1000, text, speaker: speakerIds[speaker]! });
      texts.push(text);
      turnLeft -= 1;
    }
    return { text: texts.join(' '), segments, speakers: speakerIds, words: said };
  }
}
