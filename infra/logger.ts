// Structured JSON logs (pino). Secrets never reach a log line: the Authorization header,
// access_token query values, passwords and token values are redacted here, once.
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'sms-platform', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'token', 'password', '*.token', '*.password', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  });
}

/** Removes `access_token` values from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]access_token=)[^&#]*/gi, '$1[redacted]');
}
