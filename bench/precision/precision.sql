-- bench/precision/precision.sql: what bench/precision/run adds to the bench
-- schema (bench/bench.sql): the double-precision scorer of a build with
-- -DMTDPP_VALUE_SCORES (src/query/value_scores.c), the values it scores,
-- each test basket's scores both ways and the figures drawn from them.
\set ON_ERROR_STOP on
SET client_min_messages = warning;

-- the scores of ITEMS as completions of BASKET by the model of the value
-- MODEL (mtdpp_fit's bytea), in double: as mtdpp_score answers, as an array
CREATE FUNCTION bench.value_scores(model bytea, basket integer[], items integer[]) RETURNS float8[]
AS '$libdir/mtdpp', 'mtdpp_value_scores' LANGUAGE C STABLE STRICT;

-- the value of each model, fitted by the aggregate with mtdpp_train's parameters
CREATE TABLE bench.precision_values (
    model text PRIMARY KEY,
    value bytea NOT NULL
);
ALTER TABLE bench.precision_values ALTER COLUMN value SET STORAGE EXTERNAL;

-- each test basket's scores over the catalog (ITEMS, ascending), in double
-- (D, the value) and in single precision (S, mtdpp_score on the stored model);
-- NULL: an item of the context or one the model does not know
CREATE UNLOGGED TABLE bench.precision_scores (
    model    text NOT NULL,
    order_id bigint NOT NULL,
    held_out integer NOT NULL,
    ctx      integer[] NOT NULL,
    d        float8[] NOT NULL,
    s        float8[] NOT NULL
);

-- one row per test basket: the held-out item's rank each way, the largest
-- difference of a score, the top 10 each way (score, then item id)
CREATE TABLE bench.precision_baskets (
    model    text NOT NULL,
    order_id bigint NOT NULL,
    n        integer NOT NULL,      -- candidates
    rank_d   float8 NOT NULL,
    rank_s   float8 NOT NULL,
    max_abs  float8,
    top_d    integer[] NOT NULL,
    top_s    integer[] NOT NULL
);

-- one row per model and set of test baskets
CREATE TABLE bench.precision_results (
    dataset       text NOT NULL,
    split         text NOT NULL,
    test          text NOT NULL,    -- the held-out item: random or last (added)
    kind          text NOT NULL,
    model         text NOT NULL,
    rank          integer,
    n_items       integer,
    catalog       integer,
    baskets       integer,
    same_model    boolean,          -- the value, stored, is row for row the model mtdpp_train stored
    mpr_d float8, mpr_s float8, p5_d float8, p5_s float8,
    p10_d float8, p10_s float8, p20_d float8, p20_s float8,
    mpr_eval      float8,           -- mtdpp_evaluate's figures of the stored model
    p20_eval      float8,
    scores        bigint,           -- scores compared (candidates the model knows, every basket)
    null_mismatch bigint,           -- scores NULL one way only
    max_abs       float8,
    median_abs    float8,
    p99_abs       float8,
    max_rel       float8,           -- the largest |d - s| / max(1, |d|)
    held_moved    integer,          -- baskets whose held-out item's rank differs
    held_max_move float8,           -- by at most
    top_order     integer,          -- baskets whose top 10 differs in order or items
    top_items     integer,          -- baskets whose top 10 differs in items
    top_items_max integer,          -- by at most that many items
    top_items_one integer,          -- baskets whose top 10 differs by one item
    bytes_real    bigint,           -- factors, task factors and biases of mtdpp.items, as stored (real)
    bytes_double  bigint,           -- the same in double precision (float8)
    value_bytes   bigint            -- the value mtdpp_fit returns (doubles)
);

-- The per-basket rows of MODEL from its scores over the catalog ITEMS: the
-- protocol of shared/data/README.md (every catalog item outside the context a
-- candidate, one the model does not know scored -inf; rank = 1 + higher +
-- half the ties).
CREATE FUNCTION bench.precision_baskets_of(p_model text, p_items integer[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO bench.precision_baskets
    SELECT p.model, p.order_id, r.n, r.rank_d, r.rank_s, r.max_abs, r.top_d, r.top_s
    FROM bench.precision_scores p,
    LATERAL (
        WITH u AS MATERIALIZED (
            SELECT item, coalesce(d, '-Infinity') AS d, coalesce(s, '-Infinity') AS s
            FROM unnest(p_items, p.d, p.s) AS u(item, d, s)
            WHERE NOT item = ANY (p.ctx)),
        h AS (SELECT d AS hd, s AS hs FROM u WHERE item = p.held_out)
        SELECT count(*)::integer AS n,
               1 + count(*) FILTER (WHERE d > hd) + 0.5 * (count(*) FILTER (WHERE d = hd) - 1) AS rank_d,
               1 + count(*) FILTER (WHERE s > hs) + 0.5 * (count(*) FILTER (WHERE s = hs) - 1) AS rank_s,
               max(CASE WHEN d = s THEN 0 ELSE abs(d - s) END) AS max_abs,
               (SELECT array_agg(item ORDER BY d DESC, item)
                FROM (SELECT item, d FROM u ORDER BY d DESC, item LIMIT 10) t) AS top_d,
               (SELECT array_agg(item ORDER BY s DESC, item)
                FROM (SELECT item, s FROM u ORDER BY s DESC, item LIMIT 10) t) AS top_s
        FROM u, h) r
    WHERE p.model = p_model
$$;

-- The figures of MODEL from its per-basket rows and its scores.
CREATE FUNCTION bench.precision_figures(p_model text,
    OUT baskets integer, OUT mpr_d float8, OUT mpr_s float8, OUT p5_d float8, OUT p5_s float8,
    OUT p10_d float8, OUT p10_s float8, OUT p20_d float8, OUT p20_s float8,
    OUT held_moved integer, OUT held_max_move float8, OUT top_order integer, OUT top_items integer,
    OUT top_items_max integer, OUT top_items_one integer,
    OUT scores bigint, OUT null_mismatch bigint, OUT max_abs float8, OUT median_abs float8,
    OUT p99_abs float8, OUT max_rel float8)
LANGUAGE sql AS $$
    WITH b AS (SELECT *, 10 - cardinality(ARRAY(SELECT unnest(top_d) INTERSECT SELECT unnest(top_s))) AS off
               FROM bench.precision_baskets WHERE model = p_model),
    f AS (SELECT count(*)::integer AS baskets,
                 avg(100.0 * (n - rank_d) / (n - 1)) AS mpr_d, avg(100.0 * (n - rank_s) / (n - 1)) AS mpr_s,
                 100.0 * avg((rank_d <= 5)::int) AS p5_d, 100.0 * avg((rank_s <= 5)::int) AS p5_s,
                 100.0 * avg((rank_d <= 10)::int) AS p10_d, 100.0 * avg((rank_s <= 10)::int) AS p10_s,
                 100.0 * avg((rank_d <= 20)::int) AS p20_d, 100.0 * avg((rank_s <= 20)::int) AS p20_s,
                 (count(*) FILTER (WHERE rank_d <> rank_s))::integer AS held_moved,
                 coalesce(max(abs(rank_d - rank_s)), 0) AS held_max_move,
                 (count(*) FILTER (WHERE top_d <> top_s))::integer AS top_order,
                 (count(*) FILTER (WHERE off > 0))::integer AS top_items,
                 coalesce(max(off), 0) AS top_items_max,
                 (count(*) FILTER (WHERE off = 1))::integer AS top_items_one
          FROM b),
    -- equal scores (two -inf included) differ by 0
    u AS (SELECT x.d, x.s, CASE WHEN x.d = x.s THEN 0 ELSE abs(x.d - x.s) END AS diff
          FROM bench.precision_scores p, unnest(p.d, p.s) AS x(d, s)
          WHERE p.model = p_model),
    s AS (SELECT count(*) FILTER (WHERE d IS NOT NULL AND s IS NOT NULL) AS scores,
                 count(*) FILTER (WHERE (d IS NULL) <> (s IS NULL)) AS null_mismatch,
                 max(diff) AS max_abs,
                 percentile_disc(0.5) WITHIN GROUP (ORDER BY diff) AS median_abs,
                 percentile_disc(0.99) WITHIN GROUP (ORDER BY diff) AS p99_abs,
                 max(diff / greatest(1, abs(d))) AS max_rel
          FROM u)
    SELECT f.baskets, f.mpr_d, f.mpr_s, f.p5_d, f.p5_s, f.p10_d, f.p10_s, f.p20_d, f.p20_s,
           f.held_moved, f.held_max_move, f.top_order, f.top_items, f.top_items_max, f.top_items_one,
           s.scores, s.null_mismatch, s.max_abs, s.median_abs, s.p99_abs, s.max_rel
    FROM f, s
$$;
