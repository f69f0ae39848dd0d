/**
 * What a redacted value becomes, by the contract's styles (redaction-rules.ts). One
 * substitution serves a whole timeline, so `numbered_entity_name` gives a value the same number
 * in `text`, segments and words.
 */
import type { RedactionPolicy, RedactionStyle } from '@murmur/contract';

export type Substitute = (policy: RedactionPolicy, value: string) => string;

export function substitutionOf(style: RedactionStyle): Substitute {
  switch (style) {
    case 'entity_name':
      return (policy) => `[${policy.toUpperCase()}]`;
    case 'mask':
      return (_policy, value) => '#'.repeat(Math.max(1, value.length));
    case 'numbered_entity_name': {
      const numbers = new Map<string, number>();
      const counts = new Map<RedactionPolicy, number>();
      return (policy, value) => {
        const key = `${policy}\u0000${value}`;
        let n = numbers.get(key);
        if (n === undefined) {
          n = (counts.get(policy) ?? 0) + 1;
          counts.set(policy, n);
          numbers.set(key, n);
        }
        return `[${policy.toUpperCase()}_${n}]`;
      };
    }
  }
}
