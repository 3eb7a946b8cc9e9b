// The error registry: every failure the product reports has one entry here with a stable
// code, the HTTP status and title of spec 1 §7, and the SMPP command status used when the
// same refusal happens on an SMPP session. Nobody matches on message text; callers throw
// AppError with a code, gateways map it to their wire format.

export const SMPP_STATUS = {
  ESME_ROK: 0x00000000,
  ESME_RINVMSGLEN: 0x00000001,
  ESME_RSYSERR: 0x00000008,
  ESME_RINVSRCADR: 0x0000000a,
  ESME_RINVDSTADR: 0x0000000b,
  ESME_RINVPASWD: 0x0000000e,
  ESME_RCANCELFAIL: 0x00000011,
  ESME_RINVSYSID: 0x0000000f,
  ESME_RTHROTTLED: 0x00000058,
  ESME_RSUBMITFAIL: 0x00000045,
  ESME_RINVESMCLASS: 0x00000043,
  ESME_RINVDCS: 0x00000104,
  ESME_RX_P_APPN: 0x00000065,
} as const;

interface ErrorSpec {
  readonly status: number;
  readonly title: string;
  readonly smpp: number;
  readonly description: string;
  /** Answered only by the operator console (HTML pages): its title is the page heading; not part of the APIs' OpenAPI document. */
  readonly console?: true;
}

export const ERRORS = {
  MALFORMED_JSON: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The body is not valid JSON.' },
  BODY_NOT_OBJECT: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The body is valid JSON but not a JSON object.' },
  BODY_NOT_ARRAY: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The endpoint takes a top-level JSON array (no wrapper object).' },
  WRONG_SHAPE: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'A field has the wrong JSON type.' },
  INVALID_FILTER: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'A list filter, sort, paging or group parameter is invalid.' },
  QUERY_TOO_EXPENSIVE: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'A search went beyond the cost ceiling of every query (max_execution_time, max_rows_to_read or max_memory_usage; the detail names which): narrow it.' },
  INVALID_ID: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'A path id is not a valid id.' },
  MALFORMED_URL: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The path or query string has a broken percent-encoding or is not UTF-8.' },
  MALFORMED_BODY: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The body cannot be read as sent: corrupt compression, invalid UTF-8, or a length that does not match.' },
  MALFORMED_REQUEST: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The HTTP request itself is malformed (refused by the HTTP parser).' },
  CONFLICTING_CREDENTIALS: { status: 401, title: 'Unauthorized', smpp: SMPP_STATUS.ESME_RINVPASWD, description: 'A token was sent both in the Authorization header and as access_token; send exactly one.' },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized', smpp: SMPP_STATUS.ESME_RINVPASWD, description: 'The token is missing, malformed, unknown or revoked.' },
  INSUFFICIENT_FUNDS: { status: 402, title: 'Payment Required', smpp: SMPP_STATUS.ESME_RX_P_APPN, description: 'The balance does not cover the charge.' },
  NOT_FOUND: { status: 404, title: 'Not Found', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The resource does not exist or is not visible to this token.' },
  ALREADY_LEFT: { status: 409, title: 'Conflict', smpp: SMPP_STATUS.ESME_RCANCELFAIL, description: 'A cancel of a message that is no longer scheduled: its scheduledAt came and it left for the carrier, or it was canceled already (DESIGN §4 Scheduling).' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method Not Allowed', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The path exists but not with this method; the Allow header lists the methods it takes.' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request Timeout', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The request headers or body did not arrive within the server timeout.' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload Too Large', smpp: SMPP_STATUS.ESME_RINVMSGLEN, description: 'The body is over the size limit, or a bulk has more than 100 items.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported Media Type', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The body is not sent as application/json (or a +json type) in UTF-8, or its Content-Encoding is not gzip, deflate, br or identity.' },
  VALIDATION_FAILED: { status: 422, title: 'Unprocessable Entity', smpp: SMPP_STATUS.ESME_RSUBMITFAIL, description: 'One or more fields break a rule; the body lists them per field.' },
  RATE_LIMITED: { status: 429, title: 'Too Many Requests', smpp: SMPP_STATUS.ESME_RTHROTTLED, description: 'The per-organization, per-endpoint rate limit is reached, or the organization has the most audience searches or analytics queries in flight (Retry-After says when to retry).' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request Header Fields Too Large', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'The request headers are larger than the HTTP parser accepts.' },
  INTERNAL: { status: 500, title: 'Internal Server Error', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'An internal fault; retry with backoff.' },
  ENGINE_UNAVAILABLE: { status: 503, title: 'Service Unavailable', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'An engine (NATS, Temporal, ClickHouse) is down.' },
  ANALYTICS_QUERY_REFUSED: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'An analytics query is not one SELECT over the documented relations (another statement, a second statement, a table that is not a documented relation, system tables, a table function, a SETTINGS/FORMAT clause, a dictionary or a function that reads outside); the detail says which (docs/analytics.md).' },
  ANALYTICS_QUERY_INVALID: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'ClickHouse could not parse or run an analytics query (syntax, unknown column or function, types); the detail carries its reason.' },
  ANALYTICS_LIMIT_EXCEEDED: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'An analytics query went beyond a ceiling (max_execution_time, max_rows_to_read, max_bytes_to_read, max_result_rows/bytes or max_memory_usage; the detail names which): narrow it.' },
  UNKNOWN_QUERY_PARAMETER: { status: 400, title: 'Bad Request', smpp: SMPP_STATUS.ESME_RSYSERR, description: 'A POST carries a query parameter the endpoint does not take (every POST takes access_token); the detail names each one. Nothing was done.' },
  CONSOLE_BAD_REQUEST: { status: 400, title: 'Refused', smpp: SMPP_STATUS.ESME_RSYSERR, console: true, description: 'Console: a form value is refused (a token kind, project, datasource or scope, a webhook URL, an overlap in hours, a number); the page says which.' },
  CONSOLE_SIGNED_OUT: { status: 401, title: 'Signed out', smpp: SMPP_STATUS.ESME_RSYSERR, console: true, description: 'Console: no session, or the session has ended; sign in again.' },
  CONSOLE_FORBIDDEN: { status: 403, title: 'Refused', smpp: SMPP_STATUS.ESME_RSYSERR, console: true, description: 'Console: a form comes from another origin or without a valid CSRF token, or a sign-out comes without a session.' },
  CONSOLE_NOT_FOUND: { status: 404, title: 'Not found', smpp: SMPP_STATUS.ESME_RSYSERR, console: true, description: 'Console: no such page, or the record (token, number, message, dead letter, datasource, project) is not in this organization, or the audience search is not served by this process.' },
  CONSOLE_CONFLICT: { status: 409, title: 'Conflict', smpp: SMPP_STATUS.ESME_RSYSERR, console: true, description: 'Console: the change conflicts with the record (settings of a token that is not an active api_sms token, a webhook test without a webhook URL, a number attached to another token).' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** Per-field messages, the body of a 422 (spec 1 §7): `{ errors: { fields: {...} } }`. */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly fields: FieldErrors | undefined;

  constructor(code: ErrorCode, detail: string, options: { cause?: unknown; fields?: FieldErrors } = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.fields = options.fields;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

export function validationError(fields: FieldErrors): AppError {
  const names = Object.keys(fields).join(', ');
  return new AppError('VALIDATION_FAILED', `invalid fields: ${names}`, { fields });
}

/**
 * A write the bus took but did not confirm (no acknowledgement in time, or the connection went
 * away while waiting): it may or may not be stored. A charge made for it stays held, so the
 * charge settler decides from the stream (settled if stored, refunded if not) instead of the
 * request refunding a message that may still be sent.
 */
export class OutcomeUnknownError extends Error {
  override readonly name = 'OutcomeUnknownError';
}

/**
 * The 500 of a request whose write the bus did not confirm (`what`: "the messages", "the
 * lookup"); its charge stays held for the charge settler to settle or refund.
 */
export function unconfirmed(cause: OutcomeUnknownError, what: string, retry: string): AppError {
  return new AppError('INTERNAL', `the message bus did not confirm ${what} in time: the charge stays if it stored ${what} and is refunded within about a minute (CHARGE_HOLD_REFUND_SECONDS) if it did not; ${retry}`, { cause });
}
