/** Auto-pagination: `await client.recordings.list()` is the first page; `for await` walks every item. */

/** One page, as the API answers a list. */
export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The first page when awaited; every item of every page when iterated (`for await … of`). */
export class PagePromise<T, P extends Page<T> = Page<T>> implements PromiseLike<P>, AsyncIterable<T> {
  private first?: Promise<P>;

  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<P>) {}

  private firstPage(): Promise<P> {
    this.first ??= this.fetchPage(undefined);
    return this.first;
  }

  then<R1 = P, R2 = never>(onfulfilled?: ((value: P) => R1 | PromiseLike<R1>) | null, onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    return this.firstPage().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<P | R> {
    return this.firstPage().catch(onrejected);
  }

  /** Every page, one at a time. */
  async *pages(): AsyncGenerator<P> {
    let page = await this.firstPage();
    yield page;
    while (page.has_more && page.next_cursor) {
      page = await this.fetchPage(page.next_cursor);
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }
}
