-- bench/bench.sql: tables and helpers of the benchmark (schema bench, in the
-- throwaway bench database only).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS bench CASCADE;
CREATE SCHEMA bench;

-- one row per (model, test split) evaluated
CREATE TABLE bench.results (
    dataset         text NOT NULL,      -- training data (schema)
    test_split      text NOT NULL,      -- schema of the test baskets
    model           text NOT NULL,      -- mtdpp model name
    kind            text NOT NULL,
    target          text NOT NULL,
    status          text NOT NULL,      -- ok | skipped | failed | timeout
    error           text,
    model_id        integer,
    rank            integer,
    n_items         integer,
    catalog         integer,
    baskets         integer,
    mpr             float8,
    p5              float8,
    p10             float8,
    p20             float8,
    train_seconds   float8,             -- mtdpp.models.train_seconds (the fit)
    wall_seconds    float8,             -- the whole mtdpp_train statement
    eval_seconds    float8,
    best_epoch      integer,
    epochs_run      integer,
    lat_calls       integer,
    lat_first_ms    float8,             -- first call in a new session: loads the model
    lat_p50_ms      float8,
    lat_p99_ms      float8,
    lat_mean_ms     float8,
    hyperparams     jsonb
);

-- consistency checks of the extension (bench/run, section "Checks")
CREATE TABLE bench.checks (
    dataset   text,
    model     text,
    test_split text,
    check_name text,
    baskets   bigint,
    agree     bigint,      -- check_topk: baskets whose top k agree
    mpr_sql   float8,      -- check_mpr: recomputed in SQL
    p20_sql   float8,
    mpr_eval  float8,      -- mtdpp_evaluate's figures
    p20_eval  float8
);

-- Completion latency, measured inside the server: mtdpp_complete(basket
-- without its held-out item, k) for N test baskets (a fixed pseudo-random
-- sample), each call timed with clock_timestamp().  The first call of the
-- session loads the model into the backend's cache and is reported apart;
-- p50/p99/mean are over the N calls after it.
CREATE FUNCTION bench.latency(p_model text, p_src regclass, p_n integer DEFAULT 1000, p_k integer DEFAULT 10)
RETURNS TABLE (calls integer, first_ms float8, p50_ms float8, p99_ms float8, mean_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
    t0  timestamptz;
    ms  float8[] := '{}';
    ctx integer[];
    got integer;
BEGIN
    FOR ctx IN EXECUTE format(
        'SELECT array_remove(basket, held_out) FROM %s ORDER BY md5(order_id::text) LIMIT %s',
        p_src, p_n + 1)
    LOOP
        t0 := clock_timestamp();
        SELECT count(*) INTO got FROM mtdpp_complete(ctx, p_k, p_model);
        ms := ms || (1000 * extract(epoch FROM clock_timestamp() - t0))::float8;
    END LOOP;
    RETURN QUERY
        SELECT cardinality(ms) - 1, ms[1],
               percentile_cont(0.5) WITHIN GROUP (ORDER BY x),
               percentile_cont(0.99) WITHIN GROUP (ORDER BY x),
               avg(x)
        FROM unnest(ms[2:]) x;
END
$$;

-- Does mtdpp_complete's top k (pruned by Hadamard's bound) equal the top k of
-- mtdpp_score over the whole catalog (ties by item id)?  Over N test baskets.
CREATE FUNCTION bench.check_topk(p_model text, p_src regclass, p_n integer DEFAULT 200, p_k integer DEFAULT 10)
RETURNS TABLE (baskets bigint, agree bigint)
LANGUAGE plpgsql AS $$
DECLARE
    items integer[];
BEGIN
    SELECT array_agg(item_id) INTO items FROM mtdpp.items
    WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = p_model AND active);
    RETURN QUERY EXECUTE format($q$
        WITH tb AS (SELECT order_id, array_remove(basket, held_out) AS ctx FROM %s
                    ORDER BY md5(order_id::text) LIMIT %s),
        a AS (SELECT (SELECT array_agg(c.item_id ORDER BY c.rank) FROM mtdpp_complete(ctx, %s, %L) c) AS top,
                     (SELECT array_agg(z.item_id ORDER BY z.score DESC, z.item_id)
                      FROM (SELECT s.item_id, s.score FROM mtdpp_score(ctx, $1, %L) s
                            WHERE s.score IS NOT NULL AND NOT s.item_id = ANY (ctx)
                            ORDER BY s.score DESC, s.item_id LIMIT %s) z) AS brute
              FROM tb)
        SELECT count(*), count(*) FILTER (WHERE top = brute) FROM a$q$,
        p_src, p_n, p_k, p_model, p_model, p_k) USING items;
END
$$;

-- MPR and P@20 recomputed in plain SQL from mtdpp_score over the whole
-- catalog (the protocol of data/README.md), to check mtdpp_evaluate.
CREATE FUNCTION bench.check_mpr(p_model text, p_schema text)
RETURNS TABLE (baskets bigint, mpr float8, p20 float8)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        WITH cat AS (SELECT array_agg(DISTINCT item_id) AS items FROM %1$I.orders),
        tb AS (SELECT order_id, array_remove(basket, held_out) AS ctx, held_out FROM %1$I.test_baskets),
        sc AS MATERIALIZED (
            SELECT tb.order_id, tb.held_out, s.item_id, coalesce(s.score, '-Infinity') AS score
            FROM tb, cat, LATERAL mtdpp_score(tb.ctx, cat.items, %2$L) s
            WHERE NOT s.item_id = ANY (tb.ctx)),
        h AS (SELECT order_id, score AS hs FROM sc WHERE item_id = held_out),
        rk AS (SELECT sc.order_id, count(*) AS n,
                      1 + count(*) FILTER (WHERE score > hs) + 0.5 * (count(*) FILTER (WHERE score = hs) - 1) AS rank
               FROM sc JOIN h USING (order_id) GROUP BY sc.order_id)
        SELECT count(*), avg(100.0 * (n - rank) / (n - 1))::float8, (100.0 * avg((rank <= 20)::int))::float8
        FROM rk$q$, p_schema, p_model);
END
$$;
