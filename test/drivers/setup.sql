-- Four models of the demo's order lines, one per item-key type, for the
-- driver tests (test/drivers/run): the same baskets keyed by integer ids,
-- bigint ids above 2^31, text SKUs and uuids.
\set QUIET on
SET client_min_messages = warning;
CREATE EXTENSION mtdpp;
CREATE VIEW lines_integer AS SELECT order_id, item_id FROM train_lines;
CREATE VIEW lines_bigint AS SELECT order_id, item_id + 3000000000::bigint AS item_id FROM train_lines;
CREATE VIEW lines_text AS SELECT order_id, 'sku-' || item_id AS item_id FROM train_lines;
CREATE VIEW lines_uuid AS SELECT order_id, md5(item_id::text)::uuid AS item_id FROM train_lines;
SELECT count(*) FROM mtdpp_train('by_integer', 'lines_integer') \gset
SELECT count(*) FROM mtdpp_train('by_bigint', 'lines_bigint', kind => 'itemknn') \gset
SELECT count(*) FROM mtdpp_train('by_text', 'lines_text', kind => 'itemknn') \gset
SELECT count(*) FROM mtdpp_train('by_uuid', 'lines_uuid', kind => 'itemknn') \gset
-- held-out baskets in each key type, for mtdpp_evaluate
CREATE TABLE tests_integer AS SELECT basket, held_out FROM test_baskets;
CREATE TABLE tests_bigint AS
SELECT ARRAY(SELECT i + 3000000000::bigint FROM unnest(basket) i) AS basket, held_out + 3000000000::bigint AS held_out
FROM test_baskets;
CREATE TABLE tests_text AS
SELECT ARRAY(SELECT 'sku-' || i FROM unnest(basket) i) AS basket, 'sku-' || held_out AS held_out FROM test_baskets;
CREATE TABLE tests_uuid AS
SELECT ARRAY(SELECT md5(i::text)::uuid FROM unnest(basket) i) AS basket, md5(held_out::text)::uuid AS held_out
FROM test_baskets;
