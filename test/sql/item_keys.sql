-- Items of any type: bigint, text, uuid and domains over them.  A model
-- trained from keys is the model of the same lines numbered by the keys'
-- order, and answers in the caller's type.
CREATE VIEW key_map AS
SELECT item_id, 'sku-' || pg_catalog.lpad(item_id::text, 3, '0') AS sku,
       item_id::bigint * 3000000000 AS big, md5(item_id::text)::uuid AS id
FROM (SELECT DISTINCT item_id FROM train_lines) i;
CREATE DOMAIN sku_code AS varchar(12) CHECK (VALUE LIKE 'sku-%');
CREATE TABLE keyed_lines AS
SELECT l.order_id, l.pos, k.sku, k.sku::sku_code AS sku_domain, k.big, k.id,
       -- the integers the keys' order gives (text in the "C" collation)
       dense_rank() OVER (ORDER BY k.sku COLLATE "C")::int AS sku_rank,
       dense_rank() OVER (ORDER BY k.id)::int AS id_rank
FROM train_lines l JOIN key_map k USING (item_id);
CREATE TABLE keyed_tests AS
SELECT t.order_id, (SELECT array_agg(k.sku ORDER BY o) FROM unnest(t.basket) WITH ORDINALITY b(i, o) JOIN key_map k ON k.item_id = b.i) AS basket,
       (SELECT k.sku FROM key_map k WHERE k.item_id = t.held_out) AS held_out,
       (SELECT array_agg(r.sku_rank ORDER BY o) FROM unnest(t.basket) WITH ORDINALITY b(i, o)
        JOIN key_map k ON k.item_id = b.i JOIN (SELECT DISTINCT sku, sku_rank FROM keyed_lines) r ON r.sku = k.sku) AS rank_basket,
       (SELECT r.sku_rank FROM key_map k JOIN (SELECT DISTINCT sku, sku_rank FROM keyed_lines) r USING (sku) WHERE k.item_id = t.held_out) AS rank_held_out
FROM test_baskets t;
SELECT name, kind, items FROM mtdpp_train('by_sku', 'keyed_lines', item_col => 'sku', kind => 'itemknn');
SELECT name, kind, items FROM mtdpp_train('by_rank', 'keyed_lines', item_col => 'sku_rank', kind => 'itemknn');
SELECT name, item_type FROM mtdpp_models WHERE name IN ('by_sku', 'by_rank') ORDER BY name;
-- the same model: the same test figures, the same completions key for key
SELECT (SELECT mpr FROM mtdpp_evaluate('by_sku', 'keyed_tests')) =
       (SELECT mpr FROM mtdpp_evaluate('by_rank', 'keyed_tests', 'rank_basket', 'rank_held_out')) AS same_mpr;
SELECT count(*) AS baskets,
       count(*) FILTER (WHERE (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(t.basket, 5, 'by_sku')) =
                              (SELECT array_agg(k.sku ORDER BY c.rank) FROM mtdpp_complete(t.rank_basket, 5, 'by_rank') c
                               JOIN (SELECT DISTINCT sku, sku_rank FROM keyed_lines) k ON k.sku_rank = c.item_id)) AS same_answers
FROM keyed_tests t;
-- text in, text out: real keys, none of the basket's
SELECT c.rank, c.item_id, pg_typeof(c.item_id) AS type
FROM mtdpp_complete(ARRAY['sku-001', 'sku-002'], 3, 'by_sku') c ORDER BY c.rank;
SELECT * FROM mtdpp_complete(ARRAY['sku-001', 'sku-002'], 3, 'by_sku', allowed => ARRAY['sku-005', 'sku-004', 'nope'],
                             excluded => ARRAY['sku-004']);
SELECT * FROM mtdpp_score(ARRAY['sku-001'], ARRAY['sku-002', 'nope', 'sku-001'], 'by_sku');
SELECT item_id, basket_item, rank FROM mtdpp_explain(ARRAY['sku-001', 'sku-003'], ARRAY['sku-002'], 'by_sku') ORDER BY rank;
SELECT rank, item_id FROM mtdpp_similar('sku-001', 3, 'by_sku') ORDER BY rank;
SELECT rank, item_id FROM mtdpp_complete_set(ARRAY['sku-001'], 3, 'by_sku', 0) ORDER BY rank;
SELECT * FROM mtdpp_evaluate_at('by_sku', 'keyed_tests', '{5}');
-- a basket of unknown keys: the NOTICE, and popularity
SELECT count(*) FROM mtdpp_complete(ARRAY['nope', 'none'], 3, 'by_sku');
-- a domain over varchar: trained and answered in the domain
SELECT name, items FROM mtdpp_train('by_domain', 'keyed_lines', item_col => 'sku_domain', kind => 'popularity');
SELECT pg_typeof(item_id) FROM mtdpp_complete(ARRAY['sku-001'::sku_code], 1, 'by_domain');
-- answers in a domain pass its constraints: a model of other keys cannot
-- answer into it what it forbids
CREATE DOMAIN sku_but_004 AS text CHECK (VALUE <> 'sku-004');
SELECT * FROM mtdpp_complete(ARRAY['sku-001'::sku_but_004], 3, 'by_sku');
SELECT count(*) FROM mtdpp_complete(ARRAY['sku-001'::sku_but_004], 3, 'by_sku', excluded => ARRAY['sku-004']);
DROP DOMAIN sku_but_004;
-- bigint beyond integer, in bigint and in integer baskets
SELECT name, items FROM mtdpp_train('by_big', 'keyed_lines', item_col => 'big', kind => 'itemknn');
SELECT name, items FROM mtdpp_train('by_rank_id', 'train_lines', kind => 'itemknn');
SELECT (SELECT array_agg((item_id / 3000000000)::int ORDER BY rank) FROM mtdpp_complete(ARRAY[3000000000, 6000000000], 5, 'by_big')) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2], 5, 'by_rank_id')) AS same_as_ids;
SELECT * FROM mtdpp_complete(ARRAY[3000000000::bigint], 1, 'by_big', excluded => ARRAY[1]);
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 1, 'by_big');
-- uuid
SELECT name, items FROM mtdpp_train('by_uuid', 'keyed_lines', item_col => 'id', kind => 'itemknn');
SELECT count(*) AS rows, count(DISTINCT item_id) AS keys, bool_and(item_id IN (SELECT id FROM key_map)) AS real_keys
FROM mtdpp_complete(ARRAY[md5('1')::uuid], 5, 'by_uuid');
-- rules in the keys' type
SELECT name, items FROM mtdpp_train('by_sku_rules', 'keyed_lines', item_col => 'sku', kind => 'rules');
SELECT pg_typeof(consequent), pg_typeof(antecedent) FROM mtdpp_rules('by_sku_rules', NULL::text) LIMIT 1;
SELECT * FROM mtdpp_rules('by_sku_rules') LIMIT 1;
-- wrong types: errors naming the model's type
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 3, 'by_sku');
SELECT * FROM mtdpp_complete(ARRAY[md5('1')::uuid], 3, 'by_sku');
SELECT * FROM mtdpp_complete(ARRAY['sku-001'], 3, 'by_rank');
SELECT * FROM mtdpp_complete(ARRAY['sku-001'], 3, 'by_sku', allowed => ARRAY[1]);
SELECT * FROM mtdpp_similar('nope', 3, 'by_sku');
-- untyped literals keep reading as the model's items
SELECT count(*) FROM mtdpp_complete('{}', 3, 'by_rank');
SELECT count(*) FROM mtdpp_complete('{1,2}', 3, 'by_rank', allowed => '{3,4,5}');
SELECT item_id FROM mtdpp_similar('1', 1, 'by_rank');
-- integers in any integer type, numeric too (whole numbers)
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2]::numeric[], 5, 'by_rank')) =
       (SELECT array_agg(item_id ORDER BY rank)::numeric[] FROM mtdpp_complete(ARRAY[1, 2], 5, 'by_rank')) AS same_answers;
SELECT pg_typeof(item_id) FROM mtdpp_complete(ARRAY[1, 2]::bigint[], 1, 'by_rank');
SELECT * FROM mtdpp_complete(ARRAY[1.5], 1, 'by_rank');
SELECT * FROM mtdpp_complete(ARRAY[1::smallint], 1, 'by_rank');
-- what drivers send (doc/reference.md, Drivers).  An untyped basket
-- (node-postgres's parameters, psycopg 3's list of str, an untyped PREPARE
-- parameter) answers items as text, whatever the model's keys
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete('{sku-001}', 2, 'by_sku') ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete('{1,2}', 2, 'by_rank') ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete('{3000000000,6000000000}', 2, 'by_big') ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete_set('{1,2}', 2, 'by_rank', diversity => 0) ORDER BY rank;
SELECT pg_typeof(item_id), item_id, score IS NOT NULL AS scored FROM mtdpp_score('{sku-001}', '{sku-004,nope}', 'by_sku');
SELECT DISTINCT pg_typeof(item_id), pg_typeof(basket_item) FROM mtdpp_explain('{1,2}', '{4}', 'by_rank');
SELECT pg_typeof(item_id), item_id FROM mtdpp_similar('3000000000', 1, 'by_big');
PREPARE untyped AS SELECT item_id FROM mtdpp_complete($1, 2, $2) ORDER BY rank;
EXECUTE untyped('{sku-001}', 'by_sku');
EXECUTE untyped('{3000000000,6000000000}', 'by_big');
EXECUTE untyped(ARRAY[1, 2], 'by_rank');
DEALLOCATE untyped;
-- psycopg 3's lists of small ints, smallint[]: answered as bigint, also
-- with a list of larger integers among ALLOWED or EXCLUDED
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::smallint[], 2, 'by_rank') ORDER BY rank;
-- an array of a domain over integer takes the array form as any other
-- array does, as a domain over integer[] does, answering the domain; a
-- domain over smallint fits the smallint form and the array form alike,
-- which PostgreSQL does not choose between (cast it to integer[])
CREATE DOMAIN positive_id AS integer CHECK (VALUE > 0);
CREATE DOMAIN positive_basket AS integer[] CHECK (0 < ALL (VALUE));
CREATE DOMAIN small_id AS smallint;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::positive_id[], 2, 'by_rank') ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::positive_id[], 2, 'by_rank', allowed => ARRAY[3, 4, 5]::positive_id[]) ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_score(ARRAY[1, 2]::positive_id[], ARRAY[3, 4]::positive_id[], 'by_rank');
SELECT pg_typeof(basket_item), count(*) FROM mtdpp_explain(ARRAY[1, 2]::positive_id[], ARRAY[3]::positive_id[], 'by_rank') GROUP BY 1;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::positive_basket, 2, 'by_rank') ORDER BY rank;
SELECT item_id FROM mtdpp_complete(ARRAY[1, 2]::small_id[], 2, 'by_rank') ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::small_id[]::integer[], 2, 'by_rank') ORDER BY rank;
DROP DOMAIN small_id;
DROP DOMAIN positive_basket;
DROP DOMAIN positive_id;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::smallint[], 2, 'by_rank', allowed => ARRAY[3, 4, 5]) ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_complete(ARRAY[1, 2]::smallint[], 2, 'by_rank', excluded => ARRAY[3, 40000]) ORDER BY rank;
SELECT pg_typeof(item_id), item_id FROM mtdpp_similar(1::smallint, 1, 'by_rank');
SELECT pg_typeof(item_id) FROM mtdpp_score(ARRAY[1]::smallint[], ARRAY[2]::smallint[], 'by_rank');
SELECT * FROM mtdpp_complete(ARRAY[1]::smallint[], 1, 'by_sku');
-- warm_start renumbers nothing: refused for keys
SELECT * FROM mtdpp_train('by_sku', 'keyed_lines', item_col => 'sku', warm_start => true, kind => 'multitask', epochs => 1);
-- a name keeps its item type: a new version of other items is refused,
-- activated or not, trained or saved, before the lines are read
SELECT * FROM mtdpp_train('by_sku', 'train_lines', kind => 'itemknn');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('by_sku', 'train_lines', kind => 'itemknn', activate => false);
SELECT mtdpp_save('by_sku', (SELECT mtdpp_fit(order_id, item_id) FROM train_lines));
SELECT * FROM mtdpp_train('by_rank', 'keyed_lines', item_col => 'id', kind => 'popularity');
SELECT name, count(*) AS versions, min(item_type) AS item_type FROM mtdpp_models
WHERE name IN ('by_sku', 'by_rank') GROUP BY name ORDER BY name;
-- integer and bigint are one type to the calls, which pass either to both
SELECT name, version FROM mtdpp_train('by_rank_id', 'keyed_lines', item_col => 'big', kind => 'popularity');
-- the old versions renamed (or dropped) first, the name takes the new type
BEGIN;
SELECT mtdpp_rename('by_sku', 'old_by_sku');
SELECT name, version, kind FROM mtdpp_train('by_sku', 'train_lines', kind => 'popularity');
COMMIT;
SELECT name, version, item_type FROM mtdpp_models WHERE name IN ('by_sku', 'old_by_sku') ORDER BY name;
SELECT mtdpp_drop('old_by_sku');
SELECT count(mtdpp_drop(name)) FROM (SELECT DISTINCT name FROM mtdpp_models WHERE name LIKE 'by\_%') m;
-- keys count against maintenance_work_mem: 40 keys of 20 kB, held twice,
-- are refused at 1MB before they are all held, with the figure to set
CREATE TABLE long_keys AS
SELECT o AS order_id, pg_catalog.repeat(chr(65 + i % 26), 20000) || i AS sku
FROM generate_series(1, 40) i, generate_series(1, 3) o;
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('long', 'long_keys', item_col => 'sku', kind => 'popularity');
SET maintenance_work_mem = '2MB';
SELECT name, items FROM mtdpp_train('long', 'long_keys', item_col => 'sku', kind => 'popularity');
RESET maintenance_work_mem;
SELECT length(item_id) AS length, left(item_id, 3) AS key FROM mtdpp_complete(ARRAY[pg_catalog.repeat('B', 20000) || '1'], 2, 'long') ORDER BY rank;
SELECT mtdpp_drop('long');
DROP TABLE long_keys;
DROP TABLE keyed_lines, keyed_tests;
DROP VIEW key_map;
DROP DOMAIN sku_code;
