/**
 * The text block of a successful tool result: what a client that does not read
 * `structuredContent` sees of it (decision 0023, Update 2026-11-28).
 *
 * `structuredContent` entered MCP in revision 2025-06-18; the spec asks a tool that returns it to
 * also return "the serialized JSON in a TextContent block" for backwards compatibility, i.e. for
 * clients of 2025-03-26, to whom the text is the whole result. Hosts on the later revisions
 * differ in what they hand their model (some `structuredContent` only, some `content` only), and
 * nothing a client declares says which, so the text stays the full JSON for every result a
 * model needs to read whole (a recording, a transcript, search passages, an answer). The list
 * tools' pages are the exception on 2025-06-18 and later: their text names each item (id and
 * title, what a model needs to fetch one) and the cursor, and the page itself is
 * `structuredContent` alone — a list went out twice before, and its JSON text cost more gateway
 * CPU than the page's own serialization (its quotes are escaped again inside the answer).
 */

/** The first revision with `structuredContent`; revisions are dates, so they compare as strings. */
const STRUCTURED_CONTENT_SINCE = '2025-06-18';

/**
 * The revision of a 2025-era request without an `MCP-Protocol-Version` header: the spec has the
 * server assume 2025-03-26 then (the stateless server never sees the initialize that agreed one).
 */
export const UNDECLARED_REVISION = '2025-03-26';

/** Whether a client on `revision` knows `structuredContent`. */
export function knowsStructuredContent(revision: string): boolean {
  return revision >= STRUCTURED_CONTENT_SINCE;
}

/** A list page of the contract (`object: "list"`) whose items have an id and a title or a name. */
interface ListPage {
  data: Array<{ id: string; title?: string; name?: string }>;
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * The text of a list page for clients that read `structuredContent`: one line per item (its id
 * and title or name) and how to page on, so a host that shows its model only text still lets it
 * open an item or the next page. `noun` is the item's name in the plural.
 */
export function listPageText(value: object, noun: string): string {
  const page = value as ListPage;
  const lines = [`${page.data.length} ${noun} on this page (every field of each is in structuredContent):`];
  for (const item of page.data) lines.push(`- ${item.id}: ${item.title ?? item.name ?? ''}`);
  lines.push(page.has_more && page.next_cursor ? `More: call again with cursor ${page.next_cursor}` : 'This is the last page.');
  return lines.join('\n');
}
