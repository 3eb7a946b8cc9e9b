// Data of the audience benchmark, generated inside ClickHouse (INSERT … SELECT FROM numbers)
// straight into the tables of infra/migrations/0005_audience.sql: contacts with every native
// attribute and two custom ones, and events of five types over the last year. Deterministic
// (cityHash64 of the row number), so two runs see the same audience.
import type { ClickHouse } from '../infra/clickhouse';

export const BENCH_PROJECT = 'bench';
const NAMES = "['Anna','Bob','Cleo','Dana','Emil','Fatma','Gustav','Hana','Ivan','Jonas','Karin','Lena','Mehmet','Nina','Oskar','Paula','Quinn','Rosa','Sven','Tara']";
const COUNTRIES = "['DE','FR','US','ES','IT','GB','NL','PL']";

/** `contacts` contacts of `project` (default the benchmark's project); the same attributes in every project. */
export async function generateContacts(ch: ClickHouse, contacts: number, project = BENCH_PROJECT): Promise<void> {
  await ch.client.command({
    query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, datasource_ids, first_name, last_name, email, phone_mobile,
        country_code, client_tags, tags, is_subscribed_sms, date_birthday, date_imported, geo_lat, geo_lon, attrs_string, attrs_number, attrs_bool, attrs_date,
        attrs_array, attrs_json, bucket, universal_search, created_at, updated_at)
      SELECT {project:String}, concat('u', toString(number)) AS uid, concat('a', toString(number)), 1, 0, if(number % 3 = 0, ['ds1', 'ds2'], ['ds1']),
        arrayElement(${NAMES}, 1 + cityHash64(number, 1) % 20) AS fn, arrayElement(${NAMES}, 1 + cityHash64(number, 11) % 20) AS ln,
        if(number % 10 = 0, NULL, concat(lower(fn), '.', toString(number), '@example.com')) AS em, concat('+49151', leftPad(toString(number), 8, '0')) AS ph,
        arrayElement(${COUNTRIES}, 1 + cityHash64(number, 2) % 8),
        arrayFilter(t -> cityHash64(number, t) % 5 = 0, ['vip', 'new', 'churn', 'b2b', 'promo']), [],
        if(cityHash64(number, 3) % 3 = 0, NULL, cityHash64(number, 3) % 3 = 1),
        toDate32('1950-01-01') + toInt32(cityHash64(number, 4) % 22000),
        now64(3) - toIntervalSecond(cityHash64(number, 5) % (730 * 86400)),
        35 + (cityHash64(number, 6) % 3000) / 100, -10 + (cityHash64(number, 7) % 4000) / 100,
        map('plan', arrayElement(['free', 'gold', 'silver'], 1 + cityHash64(number, 12) % 3)), map('score', toFloat64(cityHash64(number, 8) % 100)),
        map(), map('since', now64(3) - toIntervalSecond(cityHash64(number, 13) % (365 * 86400))), map(), map(),
        cityHash64(uid) % 200, lower(concat(uid, ' ', ifNull(em, ''), ' ', ph, ' ', fn, ' ', ln)), now64(3), now64(3)
      FROM numbers(${contacts})`,
    query_params: { project },
  });
}

/** Events in slices of a million rows, with progress. */
export async function generateEvents(ch: ClickHouse, events: number, contacts: number, progress: (done: number) => void, project = BENCH_PROJECT): Promise<void> {
  const slice = 1_000_000;
  for (let start = 0; start < events; start += slice) {
    const n = Math.min(slice, events - start);
    await ch.client.command({
      query: `INSERT INTO ${ch.table('events')} (project_id, datasource_id, event_type, user_id, audience_id, event_id, event_date, received_at, source,
          params_string, params_number, params_bool, params_date, params_array, params_json, version)
        SELECT {project:String}, if(number % 3 = 0, 'ds2', 'ds1'),
          arrayElement(['purchase', 'view', 'view', 'view', 'click', 'open', 'signup'], 1 + cityHash64(number, 1) % 7),
          concat('u', toString(cityHash64(number, 9) % ${contacts}) ) AS uid, concat('a', toString(cityHash64(number, 9) % ${contacts})), concat('e', toString(number)),
          now64(3) - toIntervalSecond(cityHash64(number, 2) % (365 * 86400)) AS at, at + toIntervalSecond(cityHash64(number, 3) % 60),
          arrayElement(['web', 'app'], 1 + cityHash64(number, 4) % 2),
          map('sku', concat('sku-', toString(cityHash64(number, 5) % 1000))), map('amount', toFloat64(cityHash64(number, 6) % 500)), map(), map(), map(), map(), 1
        FROM numbers(${start}, ${n})`,
      query_params: { project },
    });
    progress(start + n);
  }
}
