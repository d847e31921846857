-- bench/quality/breakdown.sql: where a model wins and loses, basket by basket.
--
-- Per test basket, the rank of its held-out item under a model (the protocol
-- of the data README: rank = 1 + #higher + half the other ties among the
-- catalog items not in the context, computed from mtdpp_score over the whole
-- catalog), and three properties of the basket measured on the training
-- lines alone:
--
--   ctx_size   items in the context (the basket without its held-out item);
--   pop        training baskets holding the held-out item;
--   max_cos    the largest co-occurrence cosine between the held-out item and
--              a context item, cooc(h, c) / sqrt(pop(h) pop(c)) (0: the
--              held-out item never shares a training basket with the context,
--              so item-kNN scores it 0, tied with every other such item);
--   n_cooc     how many context items it shares a training basket with.
--
-- bench.breakdown(model, test_baskets, train_lines [, catalog]) returns MPR
-- and P@5/10/20 by bucket of each property; bench.breakdown_pair(a, b, ...)
-- puts two models side by side.  Ranks and properties are kept in
-- bench.basket_ranks and bench.basket_features, so a second call (another
-- model, the same baskets) only scores.  Needs a server with mtdpp and the
-- models trained; loads beside bench/bench.sql or alone.
--
--   psql -v ON_ERROR_STOP=1 -f bench/quality/breakdown.sql
--   SELECT * FROM bench.breakdown_pair('daf_multitask', 'daf_itemknn',
--            'amazon_daf.test_baskets', 'amazon_daf.train_lines',
--            (SELECT array_agg(DISTINCT item_id) FROM amazon_daf.orders));
--
-- test_baskets: order_id, basket int[] (held-out item included), held_out.
-- train_lines: order_id, item_id.  catalog: every candidate item (default:
-- the model's items; the protocol's is every item of orders.csv).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS bench;

CREATE TABLE IF NOT EXISTS bench.basket_ranks (
    model     text NOT NULL,
    source    text NOT NULL,
    order_id  bigint NOT NULL,
    held_out  integer NOT NULL,
    rank      float8 NOT NULL,       -- 1 + #higher + half the other ties
    n         integer NOT NULL,      -- candidates
    PRIMARY KEY (model, source, order_id)
);

CREATE TABLE IF NOT EXISTS bench.basket_features (
    source    text NOT NULL,
    lines     text NOT NULL,
    order_id  bigint NOT NULL,
    held_out  integer NOT NULL,
    ctx_size  integer NOT NULL,
    pop       integer NOT NULL,
    max_cos   float8 NOT NULL,
    n_cooc    integer NOT NULL,
    PRIMARY KEY (source, lines, order_id)
);

-- The rank of every test basket's held-out item under p_model.  Items the
-- model does not know score -infinity (below every known item), as in
-- mtdpp_evaluate with catalog_size.  The held-out item's score is read from
-- the same call that scores the catalog, so ties are exact.
CREATE OR REPLACE FUNCTION bench.rank_baskets(p_model text, p_src regclass, p_catalog integer[] DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    cat  integer[] := p_catalog;
    done bigint;
BEGIN
    IF cat IS NULL THEN
        SELECT array_agg(i.item_id ORDER BY i.item_id) INTO cat
        FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
        WHERE m.name = p_model AND m.active;
    END IF;
    IF cat IS NULL THEN
        RAISE EXCEPTION 'no active model named %', p_model;
    END IF;
    DELETE FROM bench.basket_ranks WHERE model = p_model AND source = p_src::text;
    EXECUTE format($q$
        INSERT INTO bench.basket_ranks (model, source, order_id, held_out, rank, n)
        SELECT %1$L, %2$L, t.order_id, t.held_out, r.rank, r.n
        FROM (SELECT order_id, held_out, pg_catalog.array_remove(basket, held_out) AS ctx
              FROM %3$s) t,
        LATERAL (SELECT pg_catalog.count(*)::integer AS n,
                        1 + pg_catalog.count(*) FILTER (WHERE x.sc > x.h)
                        + 0.5 * (pg_catalog.count(*) FILTER (WHERE x.sc = x.h) - 1) AS rank
                 FROM (SELECT coalesce(s.score, '-Infinity') AS sc,
                              pg_catalog.max(coalesce(s.score, '-Infinity'))
                                  FILTER (WHERE s.item_id OPERATOR(pg_catalog.=) t.held_out) OVER () AS h
                       FROM mtdpp_score(t.ctx, $1, %1$L) s
                       WHERE s.item_id OPERATOR(pg_catalog.<>) ALL (t.ctx)) x) r$q$,
        p_model, p_src::text, p_src) USING cat;
    GET DIAGNOSTICS done = ROW_COUNT;
    ANALYZE bench.basket_ranks;     -- or the join of bench.breakdown plans a nested loop
    RETURN done;
END
$$;

-- Context size, popularity and co-occurrence of each test basket's held-out
-- item, from the training lines.
CREATE OR REPLACE FUNCTION bench.describe_baskets(p_src regclass, p_lines regclass)
RETURNS bigint
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    done bigint;
BEGIN
    DELETE FROM bench.basket_features WHERE source = p_src::text AND lines = p_lines::text;
    DROP TABLE IF EXISTS pg_temp.bd_lines, pg_temp.bd_tb;
    EXECUTE format('CREATE TEMP TABLE bd_lines AS SELECT DISTINCT order_id, item_id FROM %s', p_lines);
    CREATE INDEX ON pg_temp.bd_lines (item_id);
    ANALYZE pg_temp.bd_lines;
    EXECUTE format('CREATE TEMP TABLE bd_tb AS SELECT order_id, held_out, '
                   'pg_catalog.array_remove(basket, held_out) AS ctx FROM %s', p_src);
    EXECUTE $q$
        INSERT INTO bench.basket_features
        WITH pop AS (SELECT item_id, pg_catalog.count(*)::integer AS pop
                     FROM pg_temp.bd_lines GROUP BY item_id),
        cooc AS (SELECT a.item_id AS h, b.item_id AS c, pg_catalog.count(*) AS co
                 FROM pg_temp.bd_lines a JOIN pg_temp.bd_lines b USING (order_id)
                 WHERE a.item_id IN (SELECT held_out FROM pg_temp.bd_tb)
                   AND a.item_id OPERATOR(pg_catalog.<>) b.item_id
                 GROUP BY 1, 2),
        pairs AS (SELECT t.order_id, pg_catalog.max(k.co / pg_catalog.sqrt(ph.pop::float8 * pc.pop)) AS max_cos,
                         pg_catalog.count(*)::integer AS n_cooc
                  FROM pg_temp.bd_tb t
                  CROSS JOIN LATERAL pg_catalog.unnest(t.ctx) AS u(c)
                  JOIN cooc k ON k.h OPERATOR(pg_catalog.=) t.held_out AND k.c OPERATOR(pg_catalog.=) u.c
                  JOIN pop ph ON ph.item_id OPERATOR(pg_catalog.=) t.held_out
                  JOIN pop pc ON pc.item_id OPERATOR(pg_catalog.=) u.c
                  GROUP BY t.order_id)
        SELECT $1, $2, t.order_id, t.held_out, pg_catalog.cardinality(t.ctx),
               coalesce(p.pop, 0), coalesce(q.max_cos, 0), coalesce(q.n_cooc, 0)
        FROM pg_temp.bd_tb t
        LEFT JOIN pop p ON p.item_id OPERATOR(pg_catalog.=) t.held_out
        LEFT JOIN pairs q USING (order_id)$q$
    USING p_src::text, p_lines::text;
    GET DIAGNOSTICS done = ROW_COUNT;
    DROP TABLE pg_temp.bd_lines, pg_temp.bd_tb;
    ANALYZE bench.basket_features;
    RETURN done;
END
$$;

-- Buckets of each property (popularity: quintiles of the test baskets by the
-- training popularity of their held-out item; ord orders the rows).
CREATE OR REPLACE FUNCTION bench.basket_buckets(p_src text, p_lines text)
RETURNS TABLE (order_id bigint, dimension text, ord integer, bucket text)
LANGUAGE sql STABLE AS $$
    WITH f AS (SELECT f.*, pg_catalog.ntile(5) OVER (ORDER BY f.pop, f.order_id) AS q
               FROM bench.basket_features f
               WHERE f.source = p_src AND f.lines = p_lines),
    qr AS (SELECT q, pg_catalog.min(pop) AS lo, pg_catalog.max(pop) AS hi FROM f GROUP BY q)
    SELECT f.order_id, 'all', 0, 'all' FROM f
    UNION ALL
    SELECT f.order_id, 'context size', b.ord, b.label
    FROM f, LATERAL (SELECT * FROM (VALUES (1, 1, 1, '1'), (2, 2, 2, '2'), (3, 3, 4, '3-4'),
                                           (4, 5, 9, '5-9'), (5, 10, 19, '10-19'),
                                           (6, 20, 39, '20-39'), (7, 40, 1000000, '40+'))
                         v(ord, lo, hi, label)
                     WHERE f.ctx_size BETWEEN v.lo AND v.hi) b
    UNION ALL
    SELECT f.order_id, 'held-out popularity', f.q,
           pg_catalog.format('Q%s (%s-%s baskets)', f.q, qr.lo, qr.hi)
    FROM f JOIN qr USING (q)
    UNION ALL
    SELECT f.order_id, 'max cosine to context',
           CASE WHEN f.max_cos = 0 THEN 0 WHEN f.max_cos < 0.02 THEN 1 WHEN f.max_cos < 0.05 THEN 2
                WHEN f.max_cos < 0.1 THEN 3 WHEN f.max_cos < 0.2 THEN 4 ELSE 5 END,
           CASE WHEN f.max_cos = 0 THEN '0 (never co-occur)' WHEN f.max_cos < 0.02 THEN '(0, 0.02)'
                WHEN f.max_cos < 0.05 THEN '[0.02, 0.05)' WHEN f.max_cos < 0.1 THEN '[0.05, 0.1)'
                WHEN f.max_cos < 0.2 THEN '[0.1, 0.2)' ELSE '[0.2, 1]' END
    FROM f
    UNION ALL
    SELECT f.order_id, 'share of context co-occurring', b.ord, b.label
    FROM f, LATERAL (SELECT CASE WHEN f.n_cooc = 0 THEN 0
                                 WHEN f.n_cooc::float8 / f.ctx_size < 0.5 THEN 1
                                 WHEN f.n_cooc < f.ctx_size THEN 2 ELSE 3 END AS ord) o,
         LATERAL (SELECT o.ord, (ARRAY['none', 'under half', 'half or more', 'all'])[o.ord + 1] AS label) b
$$;

-- MPR and P@5/10/20 of p_model by bucket.  Scores the baskets unless their
-- ranks are already in bench.basket_ranks (p_refresh to score again).
CREATE OR REPLACE FUNCTION bench.breakdown(p_model text, p_src regclass, p_lines regclass,
                                           p_catalog integer[] DEFAULT NULL, p_refresh boolean DEFAULT false)
RETURNS TABLE (dimension text, ord integer, bucket text, baskets bigint, share float8,
               mpr float8, p5 float8, p10 float8, p20 float8)
LANGUAGE plpgsql AS $$
BEGIN
    IF p_refresh OR NOT EXISTS (SELECT 1 FROM bench.basket_ranks r
                                WHERE r.model = p_model AND r.source = p_src::text) THEN
        PERFORM bench.rank_baskets(p_model, p_src, p_catalog);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM bench.basket_features f
                   WHERE f.source = p_src::text AND f.lines = p_lines::text) THEN
        PERFORM bench.describe_baskets(p_src, p_lines);
    END IF;
    RETURN QUERY
        SELECT b.dimension, b.ord, b.bucket, pg_catalog.count(*),
               (100.0 * pg_catalog.count(*) / pg_catalog.sum(pg_catalog.count(*)) OVER (PARTITION BY b.dimension))::float8,
               pg_catalog.avg(100.0 * (r.n - r.rank) / (r.n - 1))::float8,
               (100.0 * pg_catalog.avg((r.rank <= 5)::integer))::float8,
               (100.0 * pg_catalog.avg((r.rank <= 10)::integer))::float8,
               (100.0 * pg_catalog.avg((r.rank <= 20)::integer))::float8
        FROM bench.basket_buckets(p_src::text, p_lines::text) b
        JOIN bench.basket_ranks r ON r.order_id = b.order_id
        WHERE r.model = p_model AND r.source = p_src::text
        GROUP BY b.dimension, b.ord, b.bucket
        ORDER BY b.dimension <> 'all', b.dimension, b.ord;
END
$$;

-- Two models side by side, with a - b.
CREATE OR REPLACE FUNCTION bench.breakdown_pair(p_a text, p_b text, p_src regclass, p_lines regclass,
                                                p_catalog integer[] DEFAULT NULL)
RETURNS TABLE (dimension text, bucket text, baskets bigint, share float8,
               mpr_a float8, mpr_b float8, d_mpr float8,
               p10_a float8, p10_b float8, d_p10 float8,
               p20_a float8, p20_b float8, d_p20 float8)
LANGUAGE plpgsql AS $$
BEGIN
    -- score and describe first, so that both sides read finished tables
    PERFORM pg_catalog.count(*) FROM bench.breakdown(p_a, p_src, p_lines, p_catalog);
    PERFORM pg_catalog.count(*) FROM bench.breakdown(p_b, p_src, p_lines, p_catalog);
    RETURN QUERY
        SELECT a.dimension, a.bucket, a.baskets, a.share,
               a.mpr, b.mpr, a.mpr - b.mpr, a.p10, b.p10, a.p10 - b.p10, a.p20, b.p20, a.p20 - b.p20
        FROM bench.breakdown(p_a, p_src, p_lines, p_catalog) a
        JOIN bench.breakdown(p_b, p_src, p_lines, p_catalog) b USING (dimension, ord)
        ORDER BY a.dimension <> 'all', a.dimension, a.ord;
END
$$;
