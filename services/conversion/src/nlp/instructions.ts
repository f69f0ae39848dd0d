/**
 * What the local engine can take from free-text `instructions` (LLM engines get the text as
 * is): a length ("short", "detailed", "5 sentences", "three bullets"), bullets instead of
 * prose, and for an email the recipient ("to Priya"), the tone ("formal") and the sender
 * ("sign as Dana", "from Dana"). Anything else is ignored.
 */

/** Instructions the local engine understood. */
export interface LocalInstructions {
  length: 'short' | 'default' | 'detailed';
  /** An exact count of sentences, bullets or points, when asked for. */
  count: number | null;
  bullets: boolean;
  recipient: string | null;
  sender: string | null;
  formal: boolean;
}

const NUMBERS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  fifteen: 15, twenty: 20, a: 1, single: 1,
};
/** The most sentences or bullets a request may ask for. */
export const MAX_REQUESTED_COUNT = 50;

export function parseInstructions(text: string): LocalInstructions {
  const t = text.trim();
  const count = /\b(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|a|single)[\s-]+(?:short\s+|key\s+|main\s+)?(sentences?|bullets?|bullet points?|points?|items?|lines?)\b/i.exec(t);
  const n = count ? (NUMBERS[count[1]!.toLowerCase()] ?? Number(count[1])) : null;
  const recipient = /\b(?:to|for|addressed to)\s+([A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)?)\b/.exec(t);
  const sender = /\b(?:sign(?:ed)?(?:\s+it)?\s+(?:as|with|off as)|from)\s+([A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)?)\b/.exec(t);
  return {
    length: /\b(?:short|brief|concise|tl;?dr|quick|one[- ]liner|succinct)\b/i.test(t)
      ? 'short'
      : /\b(?:detailed|long|in[- ]depth|thorough|comprehensive|full|extended|everything)\b/i.test(t)
        ? 'detailed'
        : 'default',
    count: n !== null && n > 0 ? Math.min(n, MAX_REQUESTED_COUNT) : null,
    bullets: /\b(?:bullets?|bullet points?|bulleted|list|points)\b/i.test(t),
    recipient: recipient && recipient[1] !== sender?.[1] ? recipient[1]! : null,
    sender: sender ? sender[1]! : null,
    formal: /\b(?:formal|formally|professional|polite|executive|client|customer)\b/i.test(t),
  };
}
