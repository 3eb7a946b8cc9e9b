// JSON answers of the hot endpoints, written as Express's res.json writes them (the same
// Content-Type, Content-Length and weak ETag) without its per-call Content-Type parsing and
// Buffer copy, and with head and body in one socket write (Node joins a string body to the head).
import type { Request, Response } from 'express';
import { crc32 } from 'node:zlib';

/** A weak ETag from the body's length and CRC-32 (W/"<length hex>-<crc hex>"). */
export function weakEtag(body: string | Buffer, encoding?: BufferEncoding): string {
  const bytes = typeof body === 'string' ? Buffer.byteLength(body, encoding) : body.length;
  const crc = typeof body === 'string' && encoding !== undefined && encoding !== 'utf8' && encoding !== 'utf-8' ? crc32(Buffer.from(body, encoding)) : crc32(body);
  return `W/"${bytes.toString(16)}-${crc.toString(16)}"`;
}

/**
 * `status` with `body` as JSON, for answers to POST (never a HEAD, never a 304: Express's
 * freshness check only applies to GET and HEAD).
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  setJsonHeaders(res, status, text);
  res.end(text);
}

/** The status and the headers res.json sets for `text`. */
function setJsonHeaders(res: Response, status: number, text: string): void {
  const bytes = Buffer.byteLength(text);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(bytes));
  res.setHeader('ETag', `W/"${bytes.toString(16)}-${crc32(text).toString(16)}"`);
}

/**
 * 200 with `body` as JSON for a GET or HEAD, answered as Express's res.json answers it (the same
 * headers and weak ETag; 304 without a body when the request's validators are fresh; HEAD
 * without a body) with head and body in one socket write, where res.json converts the body to a
 * Buffer and writes head and body apart.
 */
export function sendJsonRead(req: Request, res: Response, body: unknown): void {
  const text = JSON.stringify(body);
  setJsonHeaders(res, 200, text);
  if (req.fresh) {
    res.statusCode = 304;
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.end();
  } else {
    // A HEAD is answered the same: node:http sends no body for it and keeps Content-Length.
    res.end(text);
  }
}
