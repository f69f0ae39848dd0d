/**
 * `murmur.listen`: live transcription for a program that holds the key. On a server (Node 22+,
 * Bun, or Node 20 with `ws`) the key goes in `Authorization`; where the WebSocket cannot send
 * headers, a single-use listen token is fetched first. A browser holds no key: its server calls
 * {@link Listen.createToken} and hands the token to `connectLive` in the page.
 */
import type { HttpCore } from './http.js';
import { listenUrlOf, liveParamsOf, openLiveSession, takesHeaders, webSocketOf, type ListenOptions, type LiveParams, type LiveSession } from './live.js';
import type { components } from './generated/openapi.js';

export type ListenToken = components['schemas']['ListenToken'];

export class Listen {
  constructor(private readonly http: HttpCore) {}

  /**
   * Opens a stream; resolves once it is ready (`open`), or throws the typed error it was
   * refused with (InsufficientCreditsError, RateLimitError for a third stream at once, …).
   */
  async connect(options: ListenOptions = {}): Promise<LiveSession> {
    const ctor = webSocketOf(options.webSocket);
    const auth = options.auth ?? (takesHeaders(ctor) ? 'header' : 'token');
    const params = liveParamsOf(options);
    if (auth === 'header') return openLiveSession(ctor, this.url(params), { authorization: `Bearer ${this.http.apiKey}` }, options);
    const { token } = await this.createToken();
    return openLiveSession(ctor, this.url({ ...params, token }), undefined, options);
  }

  /** A single-use token (60 s) a browser opens one stream with; its stream is the key owner's. */
  async createToken(): Promise<ListenToken> {
    return (await this.http.request<ListenToken>({ method: 'POST', path: '/listen/tokens' })).data;
  }

  /** The stream's WebSocket URL (`ws(s)://…/api/v1/listen?…`), with a token for a browser. */
  url(params: LiveParams & { token?: string } = {}): string {
    return listenUrlOf(this.http.baseUrl, params);
  }
}
