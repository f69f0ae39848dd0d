/**
 * Input rules of the user and key management RPCs, pure so every edge is table-tested. Each
 * rule returns the normalised value or throws invalid_request naming the offending field, so a
 * bad input is always a 400-class answer and never reaches the database.
 */
import { FULL_ACCESS_SCOPES, invalidParam, isOAuthScope, OAUTH_SCOPES, type OAuthScope } from '@murmur/contract';

/** RFC 5321 caps a forward path at 254 characters. */
const MAX_EMAIL_LENGTH = 254;
/** One "@", no whitespace, a dot in the domain that is neither its first nor last character. */
const EMAIL_SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** Emails are compared and stored lowercased, so "Ada@X.io" and "ada@x.io" are one user. */
export function normalizeEmail(email: string, param = 'email'): string {
  const value = email.trim().toLowerCase();
  if (value === '') throw invalidParam(param, 'email is required.');
  if (value.length > MAX_EMAIL_LENGTH || !EMAIL_SHAPE.test(value)) {
    throw invalidParam(param, 'email must be an address such as ada@example.com.');
  }
  return value;
}

const MAX_USER_NAME = 200;
const MAX_KEY_NAME = 100;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A user's display name: optional, trimmed, at most 200 characters, no control characters. */
export function normalizeUserName(name: string): string {
  const value = name.trim();
  if (value.length > MAX_USER_NAME || CONTROL_CHARS.test(value)) {
    throw invalidParam('name', `name must be at most ${MAX_USER_NAME} characters without control characters.`);
  }
  return value;
}

/**
 * A key's name is required: it is the only thing besides the hint that tells a person which
 * key to revoke in a list.
 */
export function normalizeKeyName(name: string): string {
  const value = name.trim();
  if (value === '') throw invalidParam('name', 'name is required: say what the key is for, e.g. "CI pipeline".');
  if (value.length > MAX_KEY_NAME || CONTROL_CHARS.test(value)) {
    throw invalidParam('name', `name must be at most ${MAX_KEY_NAME} characters without control characters.`);
  }
  return value;
}

/**
 * A key's scopes: none asked means full access (read and ai); else a set of known scopes that
 * includes read (every key reads: a key that could only spend would be a footgun, not least
 * privilege), in the canonical order.
 */
export function normalizeKeyScopes(scopes: readonly string[]): OAuthScope[] {
  if (scopes.length === 0) return [...FULL_ACCESS_SCOPES];
  if (!scopes.every(isOAuthScope) || !scopes.includes('read')) {
    throw invalidParam('scopes', 'scopes must be ["read"] for a read-only key, or ["read", "ai"] (or none) for full access.');
  }
  return OAUTH_SCOPES.filter((s) => scopes.includes(s));
}
