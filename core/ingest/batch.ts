// The body of both ingestion POST endpoints (spec 2 §4 rule 1, §7): checked against the batch
// schema (schemas/ingest.ts batchSchema) with ajv, as the SMS and audience APIs check theirs.
// A wrong shape is a 400 `{ message }` for the whole request; each item is then validated on
// its own (./validate.ts), its errors reported in the batch outcome.
import Ajv from 'ajv';
import { AppError } from '../errors';
import { batchSchema } from '../../schemas/ingest';

const ajv = new Ajv({ allErrors: false, strict: false });
const checkBatch = ajv.compile<unknown[]>(batchSchema);
const { minItems, maxItems } = batchSchema;

/** The items of a batch body; a body of another shape is a 400 naming what to send. */
export function batchItems(body: unknown): unknown[] {
  if (checkBatch(body)) return body;
  const keyword = checkBatch.errors?.[0]?.keyword;
  if (keyword === 'minItems') throw new AppError('WRONG_SHAPE', `the array is empty: send ${minItems} to ${maxItems} items`);
  if (keyword === 'maxItems') throw new AppError('WRONG_SHAPE', `the array has ${(body as unknown[]).length} items: send at most ${maxItems} per request`);
  throw new AppError('BODY_NOT_ARRAY', `the body must be a top-level JSON array of ${minItems} to ${maxItems} items, even for one item (spec 2 §4 rule 1)`);
}
