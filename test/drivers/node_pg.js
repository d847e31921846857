// Calls mtdpp's query functions from Node.js as applications do: with
// node-postgres (npm's pg), passing native arrays (number[], string[]) with
// no cast, unprepared and as named prepared statements, on a model of each
// item-key type (test/drivers/setup.sql).  node-postgres sends every
// parameter untyped, so the answers hold the rows a typed SQL call gives,
// with items as strings, as node-postgres gives bigint and uuid.
//
//     NODE_PATH=<dir holding node_modules/pg> node test/drivers/node_pg.js
//
// Connects with the libpq environment (PGHOST, PGPORT, PGDATABASE, ...).
// Prints "ok - ..." or "not ok - ..." per key type and call mode.
'use strict';
const crypto = require('crypto');
const { Client } = require('pg');

const md5uuid = (i) => crypto.createHash('md5').update(String(i)).digest('hex')
  .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

// key type: the model, a key from a demo item id (in JavaScript), its SQL type
const KEYS = {
  integer: ['by_integer', (i) => i, 'integer'],
  bigint: ['by_bigint', (i) => 3000000000 + i, 'bigint'],
  text: ['by_text', (i) => 'sku-' + i, 'text'],
  uuid: ['by_uuid', md5uuid, 'uuid'],
};

async function main() {
  const client = new Client();
  await client.connect();
  let statement = 0;
  const check = (ok, what) => {
    console.log(`${ok ? 'ok' : 'not ok'} - pg ${what}`);
  };
  const fetch = async (text, values, prepare) => {
    const q = prepare ? { name: 's' + statement++, text, values } : { text, values };
    return (await client.query(q)).rows;
  };
  for (const [keyType, [model, key, sqlType]] of Object.entries(KEYS)) {
    const basket = [key(8), key(50)];
    const others = [key(3), key(16), key(53)];
    const refComplete = (await fetch(
      `SELECT item_id::text FROM mtdpp_complete($1::${sqlType}[], 5, $2) ORDER BY rank`,
      [basket, model])).map((r) => r.item_id);
    const refSimilar = (await fetch(
      `SELECT item_id::text FROM mtdpp_similar($1::${sqlType}, 5, $2) ORDER BY rank`,
      [basket[0], model])).map((r) => r.item_id);
    for (const prepare of [false, true]) {
      const mode = `${keyType} ${prepare ? 'prepared' : 'unprepared'}`;
      const problems = [];
      const same = (rows, ref) => JSON.stringify(rows.map((r) => r.item_id)) === JSON.stringify(ref);
      const strings = (rows, col = 'item_id') => rows.every((r) => typeof r[col] === 'string');
      try {
        let rows = await fetch('SELECT item_id, score, rank FROM mtdpp_complete($1, $2, $3) ORDER BY rank',
          [basket, 5, model], prepare);
        if (rows.length !== 5 || !same(rows, refComplete) || !strings(rows)) {
          problems.push(`mtdpp_complete answered ${JSON.stringify(rows)}, typed SQL ${JSON.stringify(refComplete)}`);
        }
        rows = await fetch('SELECT item_id FROM mtdpp_complete_set($1, $2, $3, diversity => 0) ORDER BY rank',
          [basket, 5, model], prepare);
        if (!same(rows, refComplete) || !strings(rows)) {
          problems.push(`mtdpp_complete_set answered ${JSON.stringify(rows)}`);
        }
        rows = await fetch('SELECT item_id, score FROM mtdpp_score($1, $2, $3)', [basket, others, model], prepare);
        if (!same(rows, others.map(String)) || rows.some((r) => r.score === null) || !strings(rows)) {
          problems.push(`mtdpp_score answered ${JSON.stringify(rows)}`);
        }
        rows = await fetch('SELECT item_id, basket_item FROM mtdpp_explain($1, $2, $3)', [basket, others, model], prepare);
        if (rows.length === 0 || !strings(rows) || !strings(rows, 'basket_item') ||
            rows.some((r) => !basket.map(String).includes(r.basket_item))) {
          problems.push(`mtdpp_explain answered ${JSON.stringify(rows)}`);
        }
        rows = await fetch('SELECT item_id FROM mtdpp_similar($1, $2, $3) ORDER BY rank', [basket[0], 5, model], prepare);
        if (!same(rows, refSimilar) || !strings(rows)) {
          problems.push(`mtdpp_similar answered ${JSON.stringify(rows)}, typed SQL ${JSON.stringify(refSimilar)}`);
        }
        rows = await fetch('SELECT baskets FROM mtdpp_evaluate($1, $2)', [model, 'tests_' + keyType], prepare);
        if (rows.length !== 1 || rows[0].baskets < 1000) {
          problems.push(`mtdpp_evaluate answered ${JSON.stringify(rows)}`);
        }
        // the cast that answers numbers, as doc/reference.md says
        if (keyType === 'integer') {
          rows = await fetch('SELECT item_id FROM mtdpp_complete($1::int[], $2, $3) ORDER BY rank',
            [basket, 5, model], prepare);
          if (!rows.every((r) => typeof r.item_id === 'number') || !same(rows, refComplete.map(Number))) {
            problems.push(`mtdpp_complete($1::int[]) answered ${JSON.stringify(rows)}`);
          }
        }
        check(problems.length === 0, mode + (problems.length ? ': ' + problems.join('; ') : ''));
      } catch (e) {
        check(false, `${mode}: ${String(e.message).replace(/\n/g, ' | ')}`);
      }
    }
  }
  await client.end();
  // test/drivers/run counts the lines; a non-zero exit means the script itself broke
}

main().catch((e) => {
  console.log(`not ok - pg: ${e.message}`);
  process.exit(1);
});
