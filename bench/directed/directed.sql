-- bench/directed/directed.sql: does the order in which items were added carry signal?
--
-- Item-kNN whose context items are weighted by their place in the basket:
--
--   score(c) = sum over context items j of weight(d_j) cos(j, c)
--
-- d_j the distance of j from the end of the context (0: the item added
-- last), cos the co-occurrence cosine of an itemknn model (read from its
-- neighbour lists in mtdpp.items, so exactly the model's weights).  The
-- weighting is one of
--
--   decay  weight = p ^ d            (p = 1: plain item-kNN)
--   last   weight = 1 if d < p       (only the p items added last)
--   first  weight = 1 if d >= n - p  (only the p items added first)
--
-- and the held-out item is ranked among every catalog item not in the
-- context, as in the data README (items scored 0 tie; the held-out item's
-- rank counts half of its ties).  bench.directed_eval returns MPR and
-- P@5/10/20; with decay 1 it is the itemknn model's mtdpp_evaluate.
--
-- test baskets: order_id, basket int[] in the order items were added (held
-- out item included), held_out.
--
--   psql -v ON_ERROR_STOP=1 -f bench/directed/directed.sql
--   SELECT * FROM bench.directed_eval('ic_itemknn', 'instacart_sample.test_baskets',
--            (SELECT array_agg(DISTINCT item_id) FROM instacart_sample.orders), 'decay', 0.8);
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS bench;

-- the cosines of an itemknn model as a table (i, j, w), both directions
CREATE OR REPLACE FUNCTION bench.knn_pairs(p_model text)
RETURNS TABLE (i integer, j integer, w float8)
LANGUAGE sql STABLE AS $$
    SELECT it.item_id, u.j, u.w::float8
    FROM mtdpp.items it JOIN mtdpp.models m USING (model_id),
         LATERAL ROWS FROM (pg_catalog.unnest(it.neighbors), pg_catalog.unnest(it.neighbor_weights)) AS u(j, w)
    WHERE m.name OPERATOR(pg_catalog.=) p_model AND m.active
$$;

CREATE OR REPLACE FUNCTION bench.directed_eval(p_model text, p_src regclass, p_catalog integer[],
                                               p_mode text DEFAULT 'decay', p_param float8 DEFAULT 1)
RETURNS TABLE (baskets bigint, mpr float8, p5 float8, p10 float8, p20 float8)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    IF p_mode NOT IN ('decay', 'last', 'first') THEN
        RAISE EXCEPTION 'unknown weighting %', p_mode USING HINT = 'Use decay, last or first.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class
                   WHERE relname = 'dir_pairs' AND relpersistence = 't'
                     AND pg_catalog.obj_description(oid, 'pg_class') = p_model) THEN
        DROP TABLE IF EXISTS pg_temp.dir_pairs;
        CREATE TEMP TABLE dir_pairs AS SELECT * FROM bench.knn_pairs(p_model);
        CREATE INDEX ON pg_temp.dir_pairs (i);
        ANALYZE pg_temp.dir_pairs;
        EXECUTE format('COMMENT ON TABLE pg_temp.dir_pairs IS %L', p_model);
    END IF;
    RETURN QUERY EXECUTE format($q$
        WITH t AS (SELECT order_id, held_out, pg_catalog.array_remove(basket, held_out) AS ctx
                   FROM %1$s),
        cw AS (SELECT t.order_id, u.item AS j,
                      CASE %2$L
                          WHEN 'decay' THEN pg_catalog.power($2, pg_catalog.cardinality(t.ctx) - u.idx)
                          WHEN 'last' THEN (pg_catalog.cardinality(t.ctx) - u.idx < $2)::integer
                          ELSE (u.idx <= $2)::integer END AS weight
               FROM t, pg_catalog.unnest(t.ctx) WITH ORDINALITY AS u(item, idx)),
        sc AS (SELECT cw.order_id, p.j AS cand, pg_catalog.sum(cw.weight * p.w) AS s
               FROM cw JOIN pg_temp.dir_pairs p ON p.i OPERATOR(pg_catalog.=) cw.j
               WHERE cw.weight > 0
               GROUP BY 1, 2),
        cand AS (SELECT sc.order_id, sc.cand, sc.s
                 FROM sc JOIN t USING (order_id)
                 WHERE sc.cand OPERATOR(pg_catalog.<>) ALL (t.ctx)),
        h AS (SELECT c.order_id, c.s FROM cand c JOIN t USING (order_id)
              WHERE c.cand OPERATOR(pg_catalog.=) t.held_out),
        rk AS (SELECT t.order_id,
                      pg_catalog.cardinality($1) - pg_catalog.cardinality(t.ctx) AS n,
                      coalesce(h.s, 0) AS hs,
                      pg_catalog.count(c.cand) AS nz,
                      pg_catalog.count(c.cand) FILTER (WHERE c.s > coalesce(h.s, 0)) AS higher,
                      pg_catalog.count(c.cand) FILTER (WHERE c.s = h.s) AS same
               FROM t LEFT JOIN h USING (order_id) LEFT JOIN cand c USING (order_id)
               GROUP BY t.order_id, t.ctx, h.s),
        r AS (SELECT n, CASE WHEN hs > 0 THEN 1 + higher + 0.5 * (same - 1)
                             ELSE 1 + nz + 0.5 * (n - nz - 1) END AS rank
              FROM rk)
        SELECT pg_catalog.count(*), pg_catalog.avg(100.0 * (n - rank) / (n - 1))::float8,
               (100.0 * pg_catalog.avg((rank <= 5)::integer))::float8,
               (100.0 * pg_catalog.avg((rank <= 10)::integer))::float8,
               (100.0 * pg_catalog.avg((rank <= 20)::integer))::float8
        FROM r$q$, p_src, p_mode) USING p_catalog, p_param;
END
$$;
