// The ingest writer reloads contact states from ds_contacts before planning a run (spec 2 §2.1:
// a patch merges into the datasource's stored record). The user ids of a project are bound as
// one newline-joined String, or as an array when one holds a newline: either way exactly the
// stored states of exactly these users come back.
import { planWrites, userKey, type ContactStates, type IngestMessage } from '../../core/ingest';
import { AudienceWriter } from '../../stores/audience-writer';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { boundParams } from '../support/bound-params';

jest.setTimeout(120_000);

const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'emoji 😀 and ü', '{"json":true}', 'tab\tinside'];
const withNewline = 'new\nline';

function contacts(seq: number, projectId: string, userIds: readonly string[]): { seq: number; message: IngestMessage } {
  return {
    seq,
    message: {
      kind: 'contacts', orgId: 'o', projectId, datasourceId: 'ds-a', receivedAt: '2026-11-27T14:00:00.000Z', failed: 0,
      contacts: userIds.map((userId) => ({ userId, attributes: { plan: { type: 'string', value: `plan of ${userId}` } } })),
    },
  };
}

describe('the writer reloads exactly the stored states of the users a run touches', () => {
  let engine: EmbeddedClickHouse;
  let writer: AudienceWriter;
  beforeAll(async () => {
    engine = await openEmbeddedClickHouse('ingest_load_states');
    writer = new AudienceWriter(engine.ch);
    const states: ContactStates = new Map();
    const messages = [contacts(1, 'p', [...hostile, withNewline, 'new', 'in-both']), contacts(2, 'q', ['plain', 'in-both', 'only-in-q'])];
    await writer.write(planWrites({ messages, states, storedBefore: () => false }), states);
  });
  afterAll(() => engine.close());

  const plans = (states: ContactStates, projectId: string, ids: readonly string[]): Record<string, unknown> =>
    Object.fromEntries(ids.map((id) => [id, states.get(userKey(projectId, id))?.get('ds-a')?.attributes['plan']?.value ?? null]));

  test('hostile ids are found; near misses, unknown users and other projects\' users get an empty record', async () => {
    const states: ContactStates = new Map();
    const asked = [...hostile, 'Plain', 'back\\\\slash', 'nobody', 'only-in-q', 'in-both'];
    await writer.loadStates(states, asked.map((userId) => ({ projectId: 'p', userId })));
    expect(plans(states, 'p', asked)).toEqual({
      ...Object.fromEntries(hostile.map((id) => [id, `plan of ${id}`])), Plain: null, 'back\\\\slash': null, nobody: null, 'only-in-q': null, 'in-both': 'plan of in-both',
    });
    expect([...states.keys()].sort()).toEqual(asked.map((id) => userKey('p', id)).sort());
  });

  test('an id holding a newline is found exactly (bound as an array), its halves are not', async () => {
    const states: ContactStates = new Map();
    await writer.loadStates(states, [withNewline, 'new', 'line', 'plain'].map((userId) => ({ projectId: 'p', userId })));
    expect(plans(states, 'p', [withNewline, 'new', 'line', 'plain'])).toEqual({ [withNewline]: `plan of ${withNewline}`, new: 'plan of new', line: null, plain: 'plan of plain' });
  });

  test('the ids of a project are bound as one String, as an array only when an id holds a newline', async () => {
    const seen = await boundParams(engine.ch, 'users', async () => {
      await writer.loadStates(new Map(), [{ projectId: 'q', userId: 'plain' }, { projectId: 'q', userId: 'x' }]);
      await writer.loadStates(new Map(), [{ projectId: 'q', userId: 'plain' }, { projectId: 'q', userId: withNewline }]);
    });
    expect(seen).toEqual(['plain\nx', ['plain', withNewline]]);
  });
});
