-- The quality/diversity trade-off of mtdpp_complete_set on amazon_daf
-- (bench/diversity/run runs it).  Needs schema daf (data/load.sql) and the
-- models daf (multitask, defaults) and daf_knn (itemknn).  For each test
-- basket the held-out item is hidden, 10 items are asked for, and
--   precision@10   percent of baskets whose held-out item is among the 10
--   categories     distinct categories among the 10 (the prefix of the item
--                  name: diaper, apparel, feeding)
--   similarity     mean cosine of the daf model's item factors over the 45
--                  pairs of the 10 (one yardstick for every method), and the
--                  mean squared cosine: what a DPP sees (a pair spans
--                  det S = 1 - cos^2), so near-duplicates and opposites alike
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE TEMP TABLE cat AS SELECT item_id, split_part(name, ':', 1) AS cat FROM daf.items;
CREATE TEMP TABLE vec AS
SELECT i.item_id, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
WHERE m.name = 'daf' AND m.active;
CREATE TEMP TABLE sim AS
SELECT a.item_id AS a, b.item_id AS b,
       coalesce((SELECT sum(x * y) / nullif(sqrt(sum(x * x) * sum(y * y)), 0)
                 FROM unnest(a.factors, b.factors) t(x, y)), 0) AS s
FROM vec a, vec b WHERE a.item_id < b.item_id;
CREATE INDEX ON sim (a, b);
CREATE TEMP TABLE tb AS
SELECT order_id, array_remove(basket, held_out) AS ctx, held_out FROM daf.test_baskets;
CREATE TEMP TABLE runs (method text, setting float8, order_id bigint, item_id int, rank int, ms float8);

\timing on
INSERT INTO runs SELECT 'mtdpp_complete', NULL, t.order_id, c.item_id, c.rank
FROM tb t, mtdpp_complete(t.ctx, 10, 'daf') c;
INSERT INTO runs SELECT 'item-kNN', NULL, t.order_id, c.item_id, c.rank
FROM tb t, mtdpp_complete(t.ctx, 10, 'daf_knn') c;
INSERT INTO runs SELECT 'mtdpp_complete_set', d, t.order_id, c.item_id, c.rank
FROM unnest(ARRAY[0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0]::float8[]) d, tb t, mtdpp_complete_set(t.ctx, 10, 'daf', d) c;
\timing off

UPDATE runs SET setting = -1 WHERE setting IS NULL;
ANALYZE runs;
CREATE TEMP TABLE pair_sim AS
SELECT r2.method, r2.setting, r2.order_id, avg(s.s) AS similarity, avg(s.s * s.s) AS similarity2
FROM runs r2 JOIN runs r3 USING (method, setting, order_id) JOIN sim s ON s.a = r2.item_id AND s.b = r3.item_id
GROUP BY 1, 2, 3;
CREATE TEMP TABLE per_basket AS
SELECT r.method, r.setting, r.order_id, bool_or(r.item_id = t.held_out) AS hit,
       count(DISTINCT c.cat) AS categories, p.similarity, p.similarity2
FROM runs r JOIN tb t USING (order_id) LEFT JOIN cat c USING (item_id)
     LEFT JOIN pair_sim p USING (method, setting, order_id)
GROUP BY r.method, r.setting, r.order_id, p.similarity, p.similarity2;

\pset format unaligned
\pset fieldsep ' '
\pset tuples_only on
\o :out
SELECT method, CASE WHEN setting < 0 THEN '-' ELSE setting::text END, round(100 * avg(hit::int), 2), round(avg(categories), 3),
       round(avg(similarity)::numeric, 4), round(avg(similarity2)::numeric, 4), count(*)
FROM per_basket GROUP BY method, setting ORDER BY method DESC, setting;
\o
