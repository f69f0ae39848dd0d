/**
 * Spoken sentences made readable: hesitations ("um", "uh", ", you know,") and leading
 * discourse markers ("Okay, so", "And", "Honestly,") go, spacing and capitals are fixed. Used
 * on every sentence the local engine quotes, so extractive output reads like written notes.
 */

const HESITATION = /(?:,\s*)?\b(?:u+m+|u+h+|e+r+m+|h+m+|uh-huh|mm-hmm)\b,?\s*/gi;
const YOU_KNOW = /,\s*(?:you know|i mean|like|sort of|kind of|basically)\s*,/gi;
const LEADING = /^(?:(?:(?:okay|ok|so|alright|all right|and|but|also|oh|yeah|yes|yep|sure|anyway|basically|honestly|actually|um|uh)\b[,.!]?|(?:well|right|now|then|great|perfect|good|thanks|cool)[,.!])\s+)+/i;

/** "First, …", "Two, …": list markers that mean nothing once the sentence is quoted alone. */
const ENUMERATOR = /^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth|finally|plus|one|two|three|four|five)\s*,\s+/i;

/** "Action item for me:" — the item itself says it once quoted in a summary. */
const ACTION_LABEL = /^(?:action items?|to-?do)(?:\s+for\s+(?:me|us))?\s*:\s*/i;

/**
 * The sentence with hesitations and leading discourse markers removed; "" when nothing is
 * left. `keepLabel` keeps an "Action item for me:" prefix (the action finder reads it).
 */
export function tidySentence(text: string, options: { keepLabel?: boolean } = {}): string {
  let s = text.replace(YOU_KNOW, ',').replace(HESITATION, ' ');
  s = s.replace(/\s+/g, ' ').replace(/\s+([,.;:!?])/g, '$1').replace(/,([.!?])/g, '$1').replace(/^[\s,;:.-]+/, '').trim();
  const unlisted = s.replace(LEADING, '').replace(ENUMERATOR, '');
  const stripped = options.keepLabel ? unlisted : unlisted.replace(ACTION_LABEL, '');
  // Keep the marker when removing it would leave a fragment ("Okay." / "So yes.").
  if (stripped.split(/\s+/).length >= 3) s = stripped;
  s = s.replace(/^[\s,;:-]+/, '');
  if (s === '') return '';
  s = s.charAt(0).toUpperCase() + s.slice(1);
  if (!/[.!?…"')\]]$/.test(s)) s += '.';
  return s;
}

/** A short clause made into an item text: first letter capitalised, no trailing punctuation. */
export function tidyClause(text: string): string {
  const s = text.replace(/\s+/g, ' ').replace(/\s+([,.;:!?])/g, '$1').replace(/^[\s,;:-]+|[\s,;:.!?-]+$/g, '').trim();
  return s === '' ? '' : s.charAt(0).toUpperCase() + s.slice(1);
}

/** Greetings, housekeeping and sign-offs: true talk, but never a point worth quoting. */
const META = [
  /\b(?:let's|let us) (?:get started|start|begin|kick off|wrap up|move on|go through|recap|take a (?:look|break))\b/i,
  /\b(?:can|could) (?:you|everyone) hear me\b/i,
  /\bthanks?(?: you)?,? (?:everyone|all|guys|team|so much)\b/i,
  /\bthat'?s (?:it|all)(?: for (?:today|now))?\b/i,
  /\b(?:writing|noting) (?:this|it) down\b/i,
  /\b(?:i think )?(?:everyone|we)(?:'s| is| are)? (?:all )?here\b/i,
  /\bsame page\b/i,
  /\bany(?:thing)? else\b/i,
  /^(?:hi|hello|hey|morning|good morning|bye|see you)\b/i,
  /\bnote to self\b/i,
  /\bquick notes?\b/i,
  /\bsending this to\b/i,
];

/** True for housekeeping sentences ("Let's get started.", "Thanks everyone, that's it."). */
export function isMeta(text: string): boolean {
  return META.some((re) => re.test(text));
}
