/**
 * PII redaction's public names (issue 32, item 7): which kinds of personal data can be
 * redacted, how a redacted value is written, and the one check of the request options
 * `redact_pii`, `redact_pii_policies` and `redact_pii_sub`. The gateway runs the check before
 * any credit is held; the transcription service's redaction/ finds and replaces the values.
 */
import { invalidParam } from './errors';

/**
 * The kinds of personal data that can be redacted, each a real-world format that is validated
 * (checksum or structure), not just shaped. The transcription service's detector table has one
 * entry per name.
 */
export const REDACTION_POLICIES = [
  'email_address',
  'phone_number',
  'credit_card_number',
  'iban',
  'us_social_security_number',
  'ip_address',
  'date_of_birth',
  'uk_national_insurance_number',
] as const;

export type RedactionPolicy = (typeof REDACTION_POLICIES)[number];

/**
 * How a redacted value is written in `text`, segments and words:
 * - `entity_name`: the policy in capitals in brackets, `[PHONE_NUMBER]`.
 * - `numbered_entity_name`: the same with a number per distinct value in the transcript,
 *   `[PHONE_NUMBER_1]`, `[PHONE_NUMBER_2]`: a reader can tell that the same number was said twice,
 *   and nothing else about it.
 * - `mask`: one `#` per character of the value in its normalised written form, whether it was
 *   spoken or written: a phone number's digits (with its `+` when international), a card's
 *   digits, an e-mail address as typed — `(555) 123-4567` and "five five five …" both become
 *   `##########`.
 * No hash style: the values are short and guessable (an SSN has under 10⁹ forms), so an unkeyed
 * hash would reveal them.
 */
export const REDACTION_STYLES = ['entity_name', 'numbered_entity_name', 'mask'] as const;

export type RedactionStyle = (typeof REDACTION_STYLES)[number];

export const DEFAULT_REDACTION_STYLE: RedactionStyle = 'entity_name';

/** What to redact and how, as checked by {@link redactionOptionsOf}. */
export interface RedactionOptions {
  /** Never empty, never with duplicates, in the order of {@link REDACTION_POLICIES}. */
  policies: RedactionPolicy[];
  style: RedactionStyle;
}

/** The request options as they arrive (decoded JSON, not yet trusted). */
export interface RedactionInput {
  redact_pii?: unknown;
  redact_pii_policies?: unknown;
  redact_pii_sub?: unknown;
}

export function isRedactionPolicy(value: unknown): value is RedactionPolicy {
  return typeof value === 'string' && (REDACTION_POLICIES as readonly string[]).includes(value);
}

export function isRedactionStyle(value: unknown): value is RedactionStyle {
  return typeof value === 'string' && (REDACTION_STYLES as readonly string[]).includes(value);
}

const quoted = (names: readonly string[]): string => names.map((n) => `"${n}"`).join(', ');

/**
 * The redaction a request asks for, or null when it asks for none. `redact_pii: true` alone
 * redacts every policy in the default style. Throws invalid_request naming the parameter for a
 * value of the wrong type, an unknown or repeated policy, an empty list, an unknown style, or
 * policies or a style without `redact_pii: true` (a request that names what to redact but does
 * not switch redaction on is a mistake that would store what its sender meant to hide).
 */
export function redactionOptionsOf(input: RedactionInput): RedactionOptions | null {
  const { redact_pii: on, redact_pii_policies: policies, redact_pii_sub: sub } = input;
  if (on !== undefined && typeof on !== 'boolean') {
    throw invalidParam('redact_pii', '`redact_pii` must be true or false.');
  }
  if (on !== true) {
    if (policies !== undefined) throw invalidParam('redact_pii_policies', '`redact_pii_policies` only applies with `redact_pii: true`.');
    if (sub !== undefined) throw invalidParam('redact_pii_sub', '`redact_pii_sub` only applies with `redact_pii: true`.');
    return null;
  }
  return { policies: policiesOf(policies), style: styleOf(sub) };
}

function policiesOf(value: unknown): RedactionPolicy[] {
  if (value === undefined) return [...REDACTION_POLICIES];
  const param = 'redact_pii_policies';
  if (!Array.isArray(value)) throw invalidParam(param, `\`${param}\` must be a list of policy names: ${quoted(REDACTION_POLICIES)}.`);
  if (value.length === 0) throw invalidParam(param, `\`${param}\` must name at least one policy (omit it to redact all of them): ${quoted(REDACTION_POLICIES)}.`);
  const seen = new Set<RedactionPolicy>();
  for (const name of value as unknown[]) {
    if (!isRedactionPolicy(name)) {
      const shown = typeof name === 'string' ? `"${name.slice(0, 64)}"` : `a ${name === null ? 'null' : typeof name}`;
      throw invalidParam(param, `\`${param}\` holds ${shown}, which is not a policy; the policies are ${quoted(REDACTION_POLICIES)}.`);
    }
    if (seen.has(name)) throw invalidParam(param, `\`${param}\` names "${name}" more than once.`);
    seen.add(name);
  }
  return REDACTION_POLICIES.filter((p) => seen.has(p));
}

function styleOf(value: unknown): RedactionStyle {
  if (value === undefined) return DEFAULT_REDACTION_STYLE;
  if (!isRedactionStyle(value)) {
    throw invalidParam('redact_pii_sub', `\`redact_pii_sub\` must be one of ${quoted(REDACTION_STYLES)} (default "${DEFAULT_REDACTION_STYLE}").`);
  }
  return value;
}
