/**
 * The one check of what the processes print: no line of any process (the services, the gateway,
 * the app — every line the launcher's Supervisor relays, `[name] …`) may carry
 *  - an API key (`svc_` + 64 hex), a webhook signing secret (`whsec_…`), a sign-in token or a
 *    session (`sit_…`, `sst_…`), an OAuth code, access or refresh token (`mac_…`, `mat_…`, `mrt_…`);
 *  - credentials inside a URL (an `audio_url` such as `https://user:pass@host/…`);
 *  - the words of a transcript: the distinctive words of the recordings the tests transcribe
 *    (their reference texts in transcribe.test.ts and transcribe-route.test.ts), and any the test adds;
 *  - any other value the test names (a password it sent, a token it was given).
 * Every process stack runs it when it stops (process-stack.ts), and tests that start the
 * launcher run it on what it printed; log-secrets.test.ts plants one leak of each kind.
 */

/** The shapes of Murmur's secrets: each found anywhere in a line, whatever surrounds it. */
const SECRET_SHAPES: Array<{ kind: string; pattern: RegExp }> = [
  { kind: 'an API key', pattern: /svc_[0-9a-f]{64}/ },
  { kind: 'a webhook signing secret', pattern: /whsec_[A-Za-z0-9+/]{16,}/ },
  { kind: 'a sign-in token', pattern: /sit_[A-Za-z0-9_-]{43}/ },
  { kind: 'a session token', pattern: /sst_[A-Za-z0-9_-]{43}/ },
  { kind: 'an OAuth authorization code', pattern: /mac_[A-Za-z0-9_-]{43}/ },
  { kind: 'an OAuth access token', pattern: /mat_[A-Za-z0-9_-]{43}/ },
  { kind: 'an OAuth refresh token', pattern: /mrt_[A-Za-z0-9_-]{43}/ },
  // user:password@ or user@ after a scheme: an audio_url (or any URL) with its credentials.
  { kind: 'credentials in a URL', pattern: /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@"'<>\\]+@/i },
];

/**
 * Distinctive words of the recordings the tests transcribe (pocketsphinx's librivox test set:
 * the reference texts in services/transcription/test/transcribe.test.ts and
 * gateway/test/transcribe-route.test.ts): none belongs in a log line.
 */
export const SPOKEN_WORDS: readonly string[] = ['dashwood', 'leisure', 'prudently', 'selfish', 'hearted', 'married', 'amiable', 'respectable'];

/** What else a test knows must never be printed. */
export interface KnownSecrets {
  /** Exact values (a token, a password sent in a URL). */
  values: string[];
  /** Words of transcripts or texts sent for conversion (matched as whole words, any case). */
  words: string[];
}

export function knownSecrets(): KnownSecrets {
  return { values: [], words: [...SPOKEN_WORDS] };
}

/** The lines a process printed: `[name] …` as the Supervisor relays them (the launcher's own messages to its user are not logs). */
export function processLines(output: string | string[]): string[] {
  const lines = typeof output === 'string' ? output.split('\n') : output;
  return lines.filter((line) => /^\[[\w-]+\s*\] /.test(line));
}

/**
 * Every leak in `lines`, one entry each: the process, what leaked and the line with the secret
 * itself masked (the report never repeats it). Empty when nothing leaked.
 */
export function secretLeaks(lines: string[], known: KnownSecrets = knownSecrets()): string[] {
  const words = [...new Set(known.words.map((w) => w.toLowerCase()).filter((w) => w.length >= 4))];
  const wordPattern = words.length > 0 ? new RegExp(`\\b(${words.map(escape).join('|')})\\b`, 'i') : undefined;
  const leaks: string[] = [];
  for (const line of processLines(lines)) {
    const name = /^\[([\w-]+)/.exec(line)![1];
    const found: Array<{ kind: string; text: string }> = [];
    for (const { kind, pattern } of SECRET_SHAPES) {
      const m = pattern.exec(line);
      if (m) found.push({ kind, text: m[0] });
    }
    for (const value of known.values) if (value && line.includes(value)) found.push({ kind: 'a value the test named', text: value });
    const word = wordPattern?.exec(line);
    if (word) found.push({ kind: `transcript words ("${word[1]!.toLowerCase()}")`, text: word[0] });
    for (const f of found) {
      const masked = found.reduce((l, g) => l.split(g.text).join(`[${g.kind}]`), line);
      leaks.push(`${name}: ${f.kind} in ${JSON.stringify(masked.slice(0, 300))}`);
    }
  }
  return leaks;
}

/** Throws, listing every leak, when `lines` carry a secret. */
export function assertNoSecretsLogged(lines: string[], known: KnownSecrets = knownSecrets()): void {
  const leaks = secretLeaks(lines, known);
  if (leaks.length > 0) throw new Error(`secrets in the processes' log lines (${leaks.length}):\n${leaks.slice(0, 20).join('\n')}`);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
