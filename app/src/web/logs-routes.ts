/**
 * Settings → Logs: the signed-in person's request log (docs/request-log.md) — every call their
 * keys and OAuth connections made in the last 30 days, with the filters of GET /api/v1/requests
 * (status, route, MCP tool, key, period) and cursor paging — and each call's detail, with its
 * request id and trace id to copy for support. Read from auth's ListRequests, as the owner.
 */
import { Router, type Request } from 'express';
import { REQUEST_ID_PATTERN, REQUEST_LOG_RETENTION_DAYS } from '@murmur/contract';
import type { ServiceClients } from '@murmur/kit';
import { auth } from '@murmur/proto';
import { message, render, signedIn, signedInOf, type GuardOptions } from './pages';
import { count, shownDate } from './present';

/** Calls a page shows. */
export const LOG_PAGE_SIZE = 50;

/** The status choices (the API's `status_code` classes). */
export const STATUS_CHOICES = [
  { value: '', label: 'Any status', filter: 0 },
  { value: '2xx', label: 'Succeeded (2xx)', filter: 2 },
  { value: '4xx', label: 'Refused (4xx)', filter: 4 },
  { value: '5xx', label: 'Failed (5xx)', filter: 5 },
] as const;

const HOUR = 3_600_000;
/** The period choices; the log keeps 30 days. */
export const PERIOD_CHOICES = [
  { value: '1h', label: 'Last hour', ms: HOUR },
  { value: '24h', label: 'Last 24 hours', ms: 24 * HOUR },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * HOUR },
  { value: '30d', label: `Last ${REQUEST_LOG_RETENTION_DAYS} days`, ms: REQUEST_LOG_RETENTION_DAYS * 24 * HOUR },
] as const;
const DEFAULT_PERIOD = '30d';

interface LogFilters {
  status: string;
  route: string;
  tool: string;
  key: string;
  period: string;
}

const one = (v: unknown): string => (typeof v === 'string' ? v.trim().slice(0, 200) : '');

function filtersOf(req: Request): LogFilters | null {
  const f = { status: one(req.query.status), route: one(req.query.route), tool: one(req.query.tool), key: one(req.query.key), period: one(req.query.period) || DEFAULT_PERIOD };
  if (!STATUS_CHOICES.some((c) => c.value === f.status) || !PERIOD_CHOICES.some((c) => c.value === f.period)) return null;
  if (f.key && !/^(key|con)_[0-9a-v]{8,40}$/.test(f.key)) return null;
  return f;
}

/** The query string of a page with these filters (and a cursor). */
function queryOf(f: LogFilters, cursor = ''): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, cursor })) if (v && !(k === 'period' && v === DEFAULT_PERIOD)) params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** A call as the list and the detail show it. */
function shownCall(e: auth.RequestLogEntry, keyNames: Map<string, string>) {
  const at = e.createdAt ?? new Date(0);
  return {
    id: e.requestId,
    at: { ...shownDate(at), clock: `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC` },
    method: e.method,
    route: e.route,
    tool: e.tool,
    status: e.status,
    outcome: e.status >= 500 ? 'failed' : e.status >= 400 || e.errorCode ? 'refused' : 'ok',
    errorCode: e.errorCode,
    latency: `${(e.latencyUs / 1000).toFixed(e.latencyUs < 10_000 ? 1 : 0)} ms`,
    key: keyNames.get(e.keyId) ?? (e.keyHint || e.keyId),
    keyId: e.keyId,
    clientId: e.clientId,
    traceId: e.traceId,
    bytesIn: count(e.bytesIn),
    bytesOut: count(e.bytesOut),
    credits: count(e.creditsCharged),
  };
}

export function logsRoutes(opts: GuardOptions & { clients: ServiceClients; now: () => Date }): Router {
  const { clients } = opts;
  const router = Router();

  /** The user's keys and connections by id, named as the Developer page names them. */
  async function keyNamesOf(userId: string): Promise<Map<string, string>> {
    const [{ apiKeys }, { connections }] = await Promise.all([clients.auth.listApiKeys({ userId }), clients.auth.listOAuthConnections({ userId })]);
    return new Map([...apiKeys.map((k) => [k.id, `${k.name} (${k.hint})`] as const), ...connections.map((c) => [c.id, `${c.clientName || c.clientId} (connected app)`] as const)]);
  }

  router.get('/settings/logs', signedIn(opts, 'logs'), async (req, res) => {
    const userId = signedInOf(res).userId;
    const filters = filtersOf(req);
    if (!filters) {
      return void message(res, 400, 'These filters are not ones this page offers', ['Pick the status, key and period from the lists.'], { link: { href: '/settings/logs', text: 'Show all calls' } });
    }
    const period = PERIOD_CHOICES.find((c) => c.value === filters.period)!;
    const cursor = one(req.query.cursor);
    const keyNames = await keyNamesOf(userId);
    let page: auth.ListRequestsResponse;
    try {
      page = await clients.auth.listRequests(
        auth.ListRequestsRequest.fromPartial({
          ownerId: userId,
          limit: LOG_PAGE_SIZE,
          cursor,
          status: STATUS_CHOICES.find((c) => c.value === filters.status)!.filter,
          route: filters.route,
          tool: filters.tool,
          keyId: filters.key,
          createdAfter: new Date(opts.now().getTime() - period.ms),
        }),
      );
    } catch (err) {
      // A cursor from other filters (an edited address): start again from the newest.
      if ((err as { param?: string }).param === 'cursor') return void res.redirect(303, `/settings/logs${queryOf(filters)}`);
      throw err;
    }
    render(res, 200, 'logs', {
      title: 'Logs',
      filters,
      statusChoices: STATUS_CHOICES,
      periodChoices: PERIOD_CHOICES,
      keys: [...keyNames].map(([id, name]) => ({ id, name })),
      calls: page.entries.map((e) => shownCall(e, keyNames)),
      filtered: Boolean(filters.status || filters.route || filters.tool || filters.key || filters.period !== DEFAULT_PERIOD),
      newer: cursor ? `/settings/logs${queryOf(filters)}` : '',
      older: page.hasMore ? `/settings/logs${queryOf(filters, page.nextCursor)}` : '',
      query: queryOf(filters),
    });
  });

  router.get('/settings/logs/:id', signedIn(opts, 'logs'), async (req, res) => {
    const userId = signedInOf(res).userId;
    const id = String(req.params.id);
    const notFound = () => message(res, 404, 'No such call', ['It is not in your log: calls are kept 30 days, and only calls made with your own keys and connections are shown.'], { link: { href: '/settings/logs', text: 'Back to Logs' } });
    if (!REQUEST_ID_PATTERN.test(id)) return void notFound();
    const [{ entries }, keyNames] = await Promise.all([clients.auth.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: userId, limit: 1, requestId: id })), keyNamesOf(userId)]);
    const entry = entries[0];
    if (!entry) return void notFound();
    render(res, 200, 'log-entry', { title: `Call ${id}`, call: shownCall(entry, keyNames), back: `/settings/logs${one(req.query.back).startsWith('?') ? one(req.query.back) : ''}` });
  });

  return router;
}
