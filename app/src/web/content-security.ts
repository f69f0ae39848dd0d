/**
 * The pages' Content-Security-Policy, in one place: helmet sends it on every response, and the
 * consent page sends it with one more `form-action` source. Browsers apply `form-action` to
 * where a form's answer redirects, too, so the consent form — whose answer is a redirect to the
 * MCP client — must name the client's redirect origin, and only that one.
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

/** The policy as a header value, with extra `form-action` sources. */
export function contentSecurityPolicy(formActionSources: readonly string[] = []): string {
  return Object.entries(CSP_DIRECTIVES)
    .map(([name, values]) => {
      const all = name === 'formAction' ? [...values, ...formActionSources] : values;
      return `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${all.join(' ')}`;
    })
    .join('; ');
}
