/**
 * The pages' Content-Security-Policy, in one place: helmet sends it on every response, and the
 * consent page sends it with one more `form-action` source. Browsers apply `form-action` to
 * where a form's answer redirects, too, so the consent form — whose answer is a redirect to the
 * MCP client — must name the client's redirect origin, and only that one. The Record page sends
 * it with one more `connect-src` source: the public API's WebSocket origin, which it streams the
 * microphone to (no other page may connect anywhere but here).
 */
export const CSP_DIRECTIVES: Readonly<Record<string, readonly string[]>> = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
};

/**
 * The CSP source that matches a redirect URI: its origin for http(s) (`https://client.example`,
 * `http://127.0.0.1:33418`), its scheme for a native app's own (`cursor:`). Null when it cannot
 * be written as a source safely.
 */
export function formActionSourceOf(redirectUri: string): string | null {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return null;
  }
  const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  return /^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.-]+(:\d+)?|\/\/\[[0-9a-f:.]+\](:\d+)?)?$/i.test(source) ? source : null;
}

/**
 * The WebSocket origin of a listen URL (`wss://api.example:8443`) as a `connect-src` source. CSP
 * matches `ws:`/`wss:` sources by scheme, host and port, so this admits that endpoint's host alone.
 */
export function connectSourceOf(listenUrl: string): string {
  return new URL(listenUrl).origin;
}

/** Sources one page adds to the policy's. */
export interface ExtraSources {
  formAction?: readonly string[];
  connectSrc?: readonly string[];
}

/** The policy as a header value, with a page's extra sources. */
export function contentSecurityPolicy(extra: ExtraSources = {}): string {
  return Object.entries(CSP_DIRECTIVES)
    .map(([name, values]) => {
      const all = [...values, ...(extra[name as keyof ExtraSources] ?? [])];
      return `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${all.join(' ')}`;
    })
    .join('; ');
}
