-- Every value of a model is validated when it is stored and when it is read:
-- values that would give silent nonsense are refused with the item and value.
\set VERBOSITY default
SELECT items FROM mtdpp_train('v', 'train_lines', rank => 4, epochs => 2, seed => 1, kind => 'multitask');
SELECT items FROM mtdpp_train('v_knn', 'train_lines', kind => 'itemknn');
CREATE TABLE v_ids AS SELECT name, model_id FROM mtdpp.models WHERE name IN ('v', 'v_knn');
-- a model written by hand, with values that are easy to follow
UPDATE mtdpp.items SET factors = '{0.5,0.5,0.5,0.5}', task_factors = '{1,1,1,1}', bias = 0.1
WHERE model_id = (SELECT model_id FROM v_ids WHERE name = 'v');
CREATE TABLE v_items AS SELECT * FROM mtdpp.items WHERE model_id IN (SELECT model_id FROM v_ids);
CREATE TABLE v_models AS SELECT model_id, log_w, n_baskets FROM mtdpp.models WHERE model_id IN (SELECT model_id FROM v_ids);
CREATE FUNCTION v_restore() RETURNS void LANGUAGE sql AS $$
    UPDATE mtdpp.items i SET popularity = o.popularity, bias = o.bias, factors = o.factors,
        task_factors = o.task_factors, neighbors = o.neighbors, neighbor_weights = o.neighbor_weights
    FROM v_items o WHERE i.model_id = o.model_id AND i.item_id = o.item_id;
    UPDATE mtdpp.models m SET log_w = o.log_w, n_baskets = o.n_baskets FROM v_models o WHERE m.model_id = o.model_id;
$$;
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
-- popularity outside 0 to the number of baskets (it gave a NaN score)
UPDATE mtdpp.items SET popularity = -2147483648 WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v_knn');
SELECT v_restore();
UPDATE mtdpp.models SET n_baskets = 3 WHERE name = 'v';
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
SELECT v_restore();
-- ln w beyond the range of w (every score became 1e308)
UPDATE mtdpp.models SET log_w = 1e308 WHERE name = 'v';
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
SELECT v_restore();
-- factors of 3e38 (the item disappeared from completions)
UPDATE mtdpp.items SET factors = '{3e38,0,0,0}' WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
-- factors too large for the bias and the task factors together
UPDATE mtdpp.items SET factors = '{1e5,0,0,0}' WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
-- a task factor whose square overflows real
UPDATE mtdpp.items SET factors = '{0.5,0.5,0.5,0.5}', task_factors = '{1,2e19,1,1}' WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v');
SELECT v_restore();
-- as large as the limit allows, and every item still gets a finite score
-- even from a basket of 50 items whose factors are all alike
UPDATE mtdpp.items SET factors = '{200,200,200,200}', task_factors = '{2,2,2,2}', bias = 0
WHERE model_id = (SELECT model_id FROM v_ids WHERE name = 'v');
SELECT count(*) AS scored, count(*) FILTER (WHERE score > '-infinity' AND score < 'infinity') AS finite
FROM mtdpp_score((SELECT array_agg(i) FROM generate_series(1, 50) i), (SELECT array_agg(i) FROM generate_series(51, 60) i), 'v');
SELECT count(*) AS completed, count(*) FILTER (WHERE score > '-infinity' AND score < 'infinity') AS finite
FROM mtdpp_complete((SELECT array_agg(i) FROM generate_series(1, 50) i), 10, 'v');
SELECT v_restore();
-- item-kNN neighbour lists: NaN weights, weights beyond a cosine, two
-- dimensions, repeated neighbours
UPDATE mtdpp.items SET neighbor_weights[1] = 'NaN' WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v_knn');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v_knn');
UPDATE mtdpp.items SET neighbor_weights[1] = 2 WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v_knn');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v_knn');
SELECT v_restore();
UPDATE mtdpp.items SET neighbors = '{{1,2},{4,5}}', neighbor_weights = '{{0.1,0.1},{0.1,0.1}}' WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v_knn');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v_knn');
UPDATE mtdpp.items SET neighbors = '{4,4}', neighbor_weights = '{0.1,0.1}' WHERE item_id = 3 AND model_id = (SELECT model_id FROM v_ids WHERE name = 'v_knn');
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v_knn');
SELECT v_restore();
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'v_knn');

-- The same values in a model value given to mtdpp_save are refused before
-- anything is stored.  Byte offsets (from 1) of the value's parts:
CREATE TABLE v_blobs AS
SELECT kind, b, 1 + 64 + json_len + 16 * epochs AS item_ids, n_items
FROM (SELECT kind, b, get_byte(b, 44) + 256 * get_byte(b, 45) AS json_len,
             get_byte(b, 28) + 256 * get_byte(b, 29) AS epochs,
             get_byte(b, 8) + 256 * get_byte(b, 9) AS n_items
      FROM (SELECT 'multitask' AS kind, mtdpp_fit(order_id, item_id, pos, '{"kind": "multitask", "rank": 4, "epochs": 1}') AS b FROM train_lines
            UNION ALL
            SELECT 'itemknn', mtdpp_fit(order_id, item_id, pos, '{"kind": "itemknn"}') FROM train_lines) f) h;
SELECT kind, n_items FROM v_blobs ORDER BY kind;
-- a factor of 1e39, beyond real (it was stored, then refused at completion)
SELECT mtdpp_save('v_bad', overlay(b placing '\x1d4a9cf487820748'::bytea from item_ids + 16 * n_items for 8))
FROM v_blobs WHERE kind = 'multitask';
-- popularity -1
SELECT mtdpp_save('v_bad', overlay(b placing '\xffffffff'::bytea from item_ids + 4 * n_items for 4))
FROM v_blobs WHERE kind = 'multitask';
-- log_w 1e308 (bytes 17-24)
SELECT mtdpp_save('v_bad', overlay(b placing '\xa0c8eb85f3cce17f'::bytea from 17 for 8))
FROM v_blobs WHERE kind = 'multitask';
-- a NaN neighbour weight: the first weight follows the starts and the neighbours
SELECT mtdpp_save('v_bad', overlay(b placing '\x0000c07f'::bytea
                                   from item_ids + 16 * n_items + 8 * (n_items + 1) + 4 * nn for 4))
FROM (SELECT *, get_byte(b, item_ids + 16 * n_items + 8 * n_items - 1)
                + 256 * get_byte(b, item_ids + 16 * n_items + 8 * n_items) AS nn
      FROM v_blobs WHERE kind = 'itemknn') k;
-- the unchanged values are stored
SELECT mtdpp_save('v_good', b) > 0 AS saved FROM v_blobs WHERE kind = 'multitask';
SELECT count(*) AS v_bad_models FROM mtdpp.models WHERE name = 'v_bad';

-- NULL order or item ids: skipped, and counted in a NOTICE
CREATE TABLE v_null_lines AS
SELECT CASE WHEN order_id % 50 = 0 THEN NULL ELSE order_id END AS order_id,
       CASE WHEN order_id % 70 = 1 AND pos = 1 THEN NULL ELSE item_id END AS item_id
FROM train_lines;
SELECT items, baskets FROM mtdpp_train('v_null', 'v_null_lines', kind => 'popularity');
SELECT length(mtdpp_fit(NULL::bigint, 1)) FROM generate_series(1, 3);

SELECT mtdpp_drop(name) FROM (VALUES ('v'), ('v_knn'), ('v_good'), ('v_null')) n(name);
DROP TABLE v_ids, v_items, v_models, v_blobs, v_null_lines;
DROP FUNCTION v_restore();
