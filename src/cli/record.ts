import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { stopwatch, wallClock } from '../core/clock.js';
import { ANSWER_SECRET_FIELDS, maskHeaders, maskQuery, maskSecrets, SECRET_FIELDS } from '../core/secrets.js';
import { isLogIn, ParityInputError, isLogOut, maskPath, RECORDED_REQUEST_HEADERS, RECORDED_RESPONSE_HEADERS, type RecordedExchange, type RecordedMessage } from './recording.js';

/** Default bound of a recording file, in bytes: past it, exchanges are passed on but not recorded. */
export const DEFAULT_RECORDING_MAX_BYTES = 64 * 1024 * 1024;
/** Default bytes of one body a recording keeps; the rest of the body is passed on, and the entry says it was cut. */
export const DEFAULT_RECORDED_BODY_MAX_BYTES = 1024 * 1024;
/**
 * Bytes of recording lines that may wait for the disk: past it a line is dropped (and counted)
 * rather than held, so a slow disk cannot make the recorder hold the recording in memory.
 */
export const RECORDING_PENDING_MAX_BYTES = 8 * 1024 * 1024;

export interface RecorderOptions {
  /** The service to record: its base URL (http or https), a path prefix allowed. */
  target: URL;
  /** The JSON Lines file to write (created, or emptied). */
  out: string;
  port?: number;
  host?: string;
  /** Pass calls that change something (anything but GET, HEAD, the log-in and the log-out). */
  allowWrites?: boolean;
  maxBytes?: number;
  maxBodyBytes?: number;
  /** Where the recorder says that the recording is full (default: a process warning). */
  warn?: (message: string) => void;
}

export interface RecorderStats {
  /** Exchanges written to the recording. */
  recorded: number;
  /** Exchanges passed on but not written: the recording was full, or the disk was behind. */
  dropped: number;
  /** Calls refused because they change something and writes were not allowed. */
  refused: number;
  /** Calls the target could not be reached for (answered 502). */
  failed: number;
  /** Bytes written to the recording. */
  bytes: number;
}

export interface Recorder {
  /** Where clients send their requests, e.g. http://127.0.0.1:8081. */
  url: string;
  stats(): RecorderStats;
  /** Stops listening, waits for the exchanges under way, and closes the recording. */
  close(): Promise<void>;
}

/** Headers that belong to one connection, never passed on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade']);

/** Whether a call is let through without --allow-writes: reads, and the log-in and log-out, which make and end a session only. */
export function isReadOnly(method: string, path: string): boolean {
  return method === 'GET' || method === 'HEAD' || isLogIn(method, path) || isLogOut(method, path);
}

/** The first bytes of a stream's body, kept while it is passed on. */
class BodyTap {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  bytes = 0;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.kept >= this.limit) return;
    const part = chunk.length <= this.limit - this.kept ? chunk : chunk.subarray(0, this.limit - this.kept);
    // A copy of a part, so that the rest of a large chunk is not kept alive with it.
    this.chunks.push(part === chunk ? chunk : Buffer.from(part));
    this.kept += part.length;
  }

  /** The kept text, its secret fields masked with the journal's masking. */
  message(headers: Record<string, string | string[]>, fields: readonly string[]): RecordedMessage {
    const message: RecordedMessage = { headers, bodyBytes: this.bytes };
    if (this.bytes === 0) return message;
    // A cut may split a character: the decoder turns the last partial one into U+FFFD.
    const text = Buffer.concat(this.chunks, this.kept).toString('utf8');
    let parsed: unknown;
    if (this.kept === this.bytes) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    message.body = maskSecrets(text, parsed, fields);
    if (this.kept < this.bytes) message.bodyCut = true;
    return message;
  }
}

function chosen(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string | string[]> {
  const picked: Record<string, string | string[] | undefined> = {};
  for (const name of names) if (headers[name] !== undefined) picked[name] = headers[name];
  return maskHeaders(picked);
}

function forwardedHeaders(headers: IncomingHttpHeaders, host?: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  if (host !== undefined) out.host = host;
  return out;
}

function answerJson(res: ServerResponse, status: number, error: string, message: string): void {
  const body = JSON.stringify({ statusCode: status, error, message });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Starts the recording proxy: every request is passed to the target and its answer back,
 * both streamed, unchanged but for the connection's own headers; each exchange that ends is
 * appended to the recording as one JSON line, secrets masked as the journal masks them.
 */
export async function startRecorder(options: RecorderOptions): Promise<Recorder> {
  const { target } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_RECORDING_MAX_BYTES;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_RECORDED_BODY_MAX_BYTES;
  const base = target.pathname.replace(/\/+$/, '');
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const stats: RecorderStats = { recorded: 0, dropped: 0, refused: 0, failed: 0, bytes: 0 };
  // Readable by its owner only: masked or not, a recording holds a tenant's data.
  const out: WriteStream = createWriteStream(options.out, { flags: 'w', mode: 0o600 });
  try {
    await once(out, 'open');
  } catch (err) {
    throw new ParityInputError(`cannot write the recording ${options.out}: ${(err as Error).message}`);
  }
  let writeError: Error | undefined;
  out.on('error', (err) => {
    writeError = err;
  });
  let full = false;

  const write = (exchange: Omit<RecordedExchange, 'seq'>) => {
    const line = `${JSON.stringify({ seq: stats.recorded + stats.dropped + 1, ...exchange })}\n`;
    const size = Buffer.byteLength(line);
    if (writeError || full || stats.bytes + size > maxBytes || out.writableLength + size > RECORDING_PENDING_MAX_BYTES) {
      if (stats.bytes + size > maxBytes && !full) {
        full = true;
        (options.warn ?? process.emitWarning)(`the recording reached its bound of ${maxBytes} bytes (--max-bytes): later exchanges are passed on but not recorded`);
      }
      stats.dropped++;
      return;
    }
    out.write(line);
    stats.bytes += size;
    stats.recorded++;
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const started = stopwatch();
    const startedAt = new Date(wallClock()).toISOString();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const query = mark < 0 ? '' : url.slice(mark + 1);
    if (!options.allowWrites && !isReadOnly(method, path)) {
      stats.refused++;
      req.resume();
      answerJson(
        res,
        403,
        'Forbidden',
        `the recorder passes only reads (GET, HEAD), the log-in and the log-out: ${method} ${path} would change the target's state (on a real tenant that may cost money); start the recorder with --allow-writes to pass it`,
      );
      return;
    }
    const requestTap = new BodyTap(maxBodyBytes);
    const outgoing = send(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port || undefined,
        method,
        path: `${base}${url}`,
        headers: forwardedHeaders(req.headers, target.host),
      },
      (answer) => {
        const responseTap = new BodyTap(maxBodyBytes);
        res.writeHead(answer.statusCode ?? 502, forwardedHeaders(answer.headers));
        answer.on('data', (chunk: Buffer) => responseTap.add(chunk));
        answer.pipe(res);
        answer.on('end', () => {
          write({
            startedAt,
            durationMs: Math.round((stopwatch() - started) * 1000) / 1000,
            method,
            path: maskPath(method, path),
            query: maskQuery(query),
            request: requestTap.message(chosen(req.headers, RECORDED_REQUEST_HEADERS), SECRET_FIELDS),
            status: answer.statusCode ?? 0,
            response: responseTap.message(chosen(answer.headers, RECORDED_RESPONSE_HEADERS), ANSWER_SECRET_FIELDS),
          });
        });
        answer.on('error', () => res.destroy());
      },
    );
    outgoing.on('error', (err) => {
      stats.failed++;
      if (res.headersSent) res.destroy();
      else answerJson(res, 502, 'Bad Gateway', `the recorder could not reach the target ${target.origin}: ${err.message}`);
    });
    req.on('data', (chunk: Buffer) => requestTap.add(chunk));
    req.on('error', () => outgoing.destroy());
    // A client that goes away ends the call to the target too; the exchange is not recorded.
    res.on('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  };

  const server = createServer(handle);
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (err) {
    out.destroy();
    throw err;
  }
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    stats: () => ({ ...stats }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      out.end();
      if (!out.closed) await once(out, 'close');
      if (writeError) throw writeError;
    },
  };
}
