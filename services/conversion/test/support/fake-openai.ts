/**
 * A local node:http server that speaks OpenAI's chat-completions API well enough to test the
 * openai engine: each test says how to answer (content, status, a raw body, or silence), and
 * every request is kept for inspection.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    response_format: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
    temperature: number;
  };
}

/** How to answer the next requests. */
export type Reply =
  | { kind: 'content'; content: string; finishReason?: string }
  | { kind: 'refusal'; refusal: string }
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'raw'; body: string }
  | { kind: 'hang' };

export interface FakeOpenAi {
  baseUrl: string;
  requests: SeenRequest[];
  reply: Reply;
  close(): Promise<void>;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: SeenRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const state: FakeOpenAi = {
    baseUrl: '',
    requests,
    reply: { kind: 'status', status: 500 },
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as SeenRequest['body'] });
      const reply = state.reply;
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      switch (reply.kind) {
        case 'content':
          return json(200, {
            id: 'chatcmpl-test',
            object: 'chat.completion',
            model: 'test-model',
            choices: [{ index: 0, message: { role: 'assistant', content: reply.content, refusal: null }, finish_reason: reply.finishReason ?? 'stop' }],
          });
        case 'refusal':
          return json(200, { choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: reply.refusal }, finish_reason: 'stop' }] });
        case 'status':
          res.writeHead(reply.status, { 'content-type': 'application/json' });
          return res.end(reply.body ?? JSON.stringify({ error: { message: 'upstream failure', type: 'server_error' } }));
        case 'raw':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(reply.body);
        case 'hang':
          hanging.add(res);
          res.on('close', () => hanging.delete(res));
          return undefined;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
