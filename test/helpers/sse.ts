import type { FastifyInstance } from 'fastify';

export interface SseEvent {
  id?: string;
  event?: string;
  data: Record<string, unknown>;
}

/** An open event stream on a listening app: its frames parsed as they come. */
export interface SseReader {
  status: number;
  headers: Headers;
  /** The next event (comments skipped), or a rejection after `ms`. */
  next(ms?: number): Promise<SseEvent>;
  /** Every event that has arrived so far, plus those arriving within `ms`. */
  take(count: number, ms?: number): Promise<SseEvent[]>;
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Listens on a free port (once) and answers the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return address;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let endResolve!: () => void;
  const ended = new Promise<void>((resolve) => (endResolve = resolve));
  const wake = () => waiters.splice(0).forEach((w) => w());
  void (async () => {
    if (!res.body) return endResolve();
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event: Partial<SseEvent> = {};
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) event.data = JSON.parse(line.slice(6));
          }
          if (event.data) events.push(event as SseEvent);
        }
        wake();
      }
    } catch {
      // aborted
    }
    endResolve();
    wake();
  })();
  let read = 0;
  const next = (ms = 3000): Promise<SseEvent> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no event within ${ms} ms (got ${events.length})`)), ms);
      const check = () => {
        if (read < events.length) {
          clearTimeout(timer);
          resolve(events[read++]);
        } else waiters.push(check);
      };
      check();
    });
  return {
    status: res.status,
    headers: res.headers,
    next,
    async take(count, ms = 3000) {
      const out: SseEvent[] = [];
      for (let i = 0; i < count; i++) out.push(await next(ms));
      return out;
    },
    comments,
    ended,
    close: () => controller.abort(),
  };
}
