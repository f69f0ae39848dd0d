/**
 * Spoken sentences made readable: hesitations ("um", "uh", ", you know,") and leading
 * discourse markers ("Okay, so", "And", "Honestly,") go, stutters and false starts are repaired
 * ("if if if we're gon if we're gonna" → "if we're gonna"), spacing and capitals are fixed. Used
 * on every sentence the local engine quotes, so extractive output reads like written notes.
 */

const HESITATION = /(?:,\s*)?\b(?:u+m+|u+h+|e+r+m+|h+m+|m{2,}|uh-huh|mm-hmm)\b,?\s*/gi;
const YOU_KNOW = /,\s*(?:you know|i mean|like|sort of|kind of|basically)\s*,/gi;
const LEADING = /^(?:(?:(?:okay|ok|so|alright|all right|and|but|also|oh|yeah|yes|yep|sure|anyway|basically|honestly|actually|um|uh)\b[,.!]?|(?:well|right|now|then|great|perfect|good|thanks|cool)[,.!])\s+)+/i;

/** "First, …", "Two, …": list markers that mean nothing once the sentence is quoted alone. */
const ENUMERATOR = /^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth|finally|plus|one|two|three|four|five)\s*,\s+/i;

/** "Action item for me:" — the item itself says it once quoted in a summary. */
const ACTION_LABEL = /^(?:action items?|to-?do)(?:\s+for\s+(?:me|us))?\s*:\s*/i;

/** Short words that are words, not cut-off starts of the next one ("a about" is a slip, not a fragment). */
const SHORT_WORDS = new Set(
  'a an i in on at to is it as be we he me us so no of or by do go up my the and for not but all can our out one two now how who any too off own see new are was has had its his her you they them'.split(' '),
);

const bare = (w: string) => w.toLowerCase().replace(/^[^a-z0-9']+|[^a-z0-9']+$/g, '');

/**
 * A cut-off word: one to four lowercase letters that are not a word and start `next`, the word
 * it was cut from ("tha that"), or a lone lowercase letter ("m"). Capitalised ones are names and
 * labels ("Plan B", "Jo Johnson"), and "x" is a times sign: kept.
 */
function isFragment(word: string, next: string | undefined): boolean {
  const w = bare(word);
  if (!/^[a-z]{1,4}$/.test(word) || SHORT_WORDS.has(w)) return false;
  if (w.length === 1) return w !== 'x';
  const n = next ? bare(next) : '';
  return n.length > w.length && n.startsWith(w);
}

/**
 * Spoken repairs undone: a word or phrase of up to three words said twice in a row ("of of",
 * "I think I think") or restarted after a cut-off word ("we're gon we're gonna") is kept once,
 * and cut-off words go.
 */
export function repairDisfluencies(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const same = (a: number, b: number, len: number) => {
    for (let k = 0; k < len; k += 1) if (bare(words[a + k] ?? '') !== bare(words[b + k] ?? '') || bare(words[a + k] ?? '') === '') return false;
    return true;
  };
  const out: string[] = [];
  for (let i = 0; i < words.length; ) {
    let skipped = false;
    for (let len = 3; len >= 1 && !skipped; len -= 1) {
      if (i + 2 * len > words.length) continue;
      // Said twice: keep the second saying (it carries the punctuation that follows).
      if (same(i, i + len, len)) {
        i += len;
        skipped = true;
      } else if (i + 2 * len + 1 <= words.length && same(i, i + len + 1, len) && isFragment(words[i + len]!, words[i + 2 * len + 1] ?? words[i + len + 1])) {
        i += len + 1;
        skipped = true;
      }
    }
    if (skipped) continue;
    if (!isFragment(words[i]!, words[i + 1])) out.push(words[i]!);
    i += 1;
  }
  return out.join(' ');
}

/**
 * The sentence with hesitations and leading discourse markers removed; "" when nothing is
 * left. `keepLabel` keeps an "Action item for me:" prefix (the action finder reads it).
 */
export function tidySentence(text: string, options: { keepLabel?: boolean } = {}): string {
  let s = repairDisfluencies(text.replace(YOU_KNOW, ',').replace(HESITATION, ' '));
  s = s.replace(/\s+/g, ' ').replace(/\s+([,.;:!?])/g, '$1').replace(/,([.!?])/g, '$1').replace(/^[\s,;:.-]+/, '').trim();
  const unlisted = s.replace(LEADING, '').replace(ENUMERATOR, '');
  const stripped = options.keepLabel ? unlisted : unlisted.replace(ACTION_LABEL, '');
  // Keep the marker when removing it would leave a fragment ("Okay." / "So yes.").
  if (stripped.split(/\s+/).length >= 3) s = stripped;
  s = s.replace(/^[\s,;:-]+/, '');
  if (s === '') return '';
  s = s.charAt(0).toUpperCase() + s.slice(1);
  // A sentence cut off mid-clause ("…, so that you could,") ends on its last word.
  s = s.replace(/[\s,;:-]+$/, '').replace(/([^.])\.{2}$/, '$1.');
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
