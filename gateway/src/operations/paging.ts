/** Paging input shared by every list operation (REST query and MCP arguments alike). */
import type { library } from '@murmur/proto';
import { DEFAULT_PAGE_LIMIT, invalidParam, MAX_PAGE_LIMIT } from '@murmur/contract';

/** The contract's page sizes (contract limits.ts), which the library enforces too; the front ends describe them. */
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT };

export interface PageInput {
  /** 1–100; absent means 20. */
  limit?: number;
  cursor?: string;
}

/**
 * The RPC page of a public page input. The public contract has no "0 means default" (the wire
 * format's convention), so an explicit limit outside 1–100 is refused here.
 */
export function pageRequest(input: PageInput): library.PageRequest {
  const { limit } = input;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)) {
    throw invalidParam('limit', `\`limit\` must be an integer from 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`);
  }
  return { limit: limit ?? DEFAULT_PAGE_LIMIT, cursor: input.cursor ?? '' };
}
