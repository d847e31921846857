-- bench/bench.sql: the bench schema of the throwaway bench database, for
-- bench/quality/run and bench/speed/run: the tables they fill (exported as CSV for
-- bench/quality/report.py), the baskets they complete and the one latency function
-- both use.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS bench CASCADE;
CREATE SCHEMA bench;

-- one row per model and set of test baskets it is evaluated on
CREATE TABLE bench.results (
    dataset         text NOT NULL,
    split           text NOT NULL,      -- 'canonical' (the dataset's split.csv) or the seed of make_split.py
    test            text NOT NULL,      -- the held-out item: 'random' or 'last' (added)
    model           text NOT NULL,
    kind            text NOT NULL,
    target          text NOT NULL,      -- mtdpp_train's target
    status          text NOT NULL,      -- ok | skipped | failed | timeout
    error           text,
    rank            integer,
    n_items         integer,
    catalog         integer,            -- distinct items of orders.csv: the candidates
    baskets         integer,            -- test baskets evaluated
    test_baskets    integer,            -- test baskets of the split
    mpr             float8,
    p5              float8,
    p10             float8,
    p20             float8,
    train_seconds   float8,             -- mtdpp.models.train_seconds (the fit)
    wall_seconds    float8,             -- the whole mtdpp_train statement
    eval_seconds    float8,
    best_epoch      integer,
    epochs_run      integer,
    n_examples      bigint,
    lat_calls       integer,
    lat_first_ms    float8,             -- first call of a new session: loads the library and the model
    lat_p50_ms      float8,
    lat_p99_ms      float8,
    lat_mean_ms     float8,
    hyperparams     jsonb,
    chosen          jsonb,              -- the hyperparameters that differ from the kind's defaults
    busy            float8,             -- cores busy on the machine while training (this one's included)
    load1           float8              -- 1-minute load average after training
);

-- consistency checks of the extension
CREATE TABLE bench.checks (
    dataset    text,
    model      text,
    check_name text,
    baskets    bigint,
    agree      bigint,      -- topk: baskets whose top k agree
    mpr_sql    float8,      -- mpr: recomputed in SQL
    p20_sql    float8,
    mpr_eval   float8,      -- mtdpp_evaluate's figures
    p20_eval   float8
);

-- Named lists of baskets to complete, numbered from 0.
CREATE TABLE bench.contexts (
    name   text NOT NULL,
    i      integer NOT NULL,
    basket integer[] NOT NULL,
    PRIMARY KEY (name, i)
);

-- Fills the contexts NAME with the int[] of each row of QUERY, in its order.
CREATE FUNCTION bench.fill_contexts(p_name text, p_query text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
BEGIN
    DELETE FROM bench.contexts WHERE name = p_name;
    EXECUTE format('INSERT INTO bench.contexts SELECT %L, (row_number() OVER ())::int - 1, b FROM (%s) q(b)',
                   p_name, p_query);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

-- Milliseconds of each of CALLS completions, mtdpp_complete(basket, K, MODEL)
-- for the baskets of CONTEXTS in turn (again from the first when there are
-- fewer), each timed inside the server with clock_timestamp(), so the client
-- and the network take no part.  WARM_UP: one untimed call first, which loads
-- the model into the backend's cache; without it, the first call of a new
-- session also loads the library.  UNPRUNED: score every item of the model
-- (mtdpp_score, one row per item) instead of the pruned top K.
CREATE FUNCTION bench.latency(p_model text, p_contexts text, p_calls integer, p_k integer DEFAULT 10,
                              p_warm_up boolean DEFAULT true, p_unpruned boolean DEFAULT false)
RETURNS float8[]
LANGUAGE plpgsql AS $$
DECLARE
    nb    integer;
    b     integer[];
    every integer[];
    t0    timestamptz;
    ms    float8[] := '{}';
BEGIN
    SELECT count(*) INTO nb FROM bench.contexts WHERE name = p_contexts;
    IF nb = 0 THEN
        RAISE EXCEPTION 'no baskets in contexts "%"', p_contexts;
    END IF;
    IF p_unpruned THEN
        SELECT array_agg(it.item_id) INTO every
        FROM mtdpp.items it JOIN mtdpp.models m USING (model_id)
        WHERE m.name = p_model AND m.active;
    END IF;
    FOR c IN CASE WHEN p_warm_up THEN -1 ELSE 0 END .. p_calls - 1 LOOP
        SELECT basket INTO b FROM bench.contexts WHERE name = p_contexts AND i = greatest(c, 0) % nb;
        t0 := clock_timestamp();
        IF p_unpruned THEN
            PERFORM * FROM mtdpp_score(b, every, p_model);
        ELSE
            PERFORM * FROM mtdpp_complete(b, p_k, p_model);
        END IF;
        IF c >= 0 THEN
            ms := ms || 1000 * extract(epoch FROM clock_timestamp() - t0)::float8;
        END IF;
    END LOOP;
    RETURN ms;
END
$$;

-- the P-quantile of X (continuous)
CREATE FUNCTION bench.pct(x float8[], p float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT percentile_cont(p) WITHIN GROUP (ORDER BY v) FROM unnest(x) v $$;

-- Does mtdpp_complete's top k (pruned) equal the top k of mtdpp_score over
-- the whole catalog (ties by item id)?  Over N test baskets.
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

-- Recall@K of mtdpp_complete against the exact top K, mtdpp_score over the
-- whole catalog (ties by item id), over the first N baskets of CONTEXTS: the
-- mean share of the exact top K that mtdpp_complete answers.
CREATE FUNCTION bench.topk_recall(p_model text, p_contexts text, p_n integer DEFAULT 200, p_k integer DEFAULT 10)
RETURNS TABLE (baskets bigint, recall float8, same bigint)
LANGUAGE sql AS $$
    WITH every AS (SELECT array_agg(it.item_id) AS items FROM mtdpp.items it JOIN mtdpp.models m USING (model_id)
                   WHERE m.name = p_model AND m.active),
    b AS (SELECT basket FROM bench.contexts WHERE name = p_contexts ORDER BY i LIMIT p_n),
    a AS (SELECT (SELECT array_agg(c.item_id ORDER BY c.rank) FROM mtdpp_complete(b.basket, p_k, p_model) c) AS top,
                 (SELECT array_agg(z.item_id ORDER BY z.score DESC, z.item_id)
                  FROM (SELECT s.item_id, s.score FROM mtdpp_score(b.basket, every.items, p_model) s
                        WHERE s.score IS NOT NULL ORDER BY s.score DESC, s.item_id LIMIT p_k) z) AS exact
          FROM b, every)
    SELECT count(*), avg(cardinality(ARRAY(SELECT unnest(top) INTERSECT SELECT unnest(exact)))::float8
                         / greatest(cardinality(exact), 1)),
           count(*) FILTER (WHERE top = exact)
    FROM a
$$;

-- MPR and P@20 recomputed in plain SQL from mtdpp_score over the whole
-- catalog (the protocol of the data's README), to check mtdpp_evaluate.
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

-- bench/speed/run: every timed call of a section (complete, unpruned,
-- after_change, new_session, new_session_loaded, steady), the busy cores of
-- the machine and its load average meanwhile
CREATE TABLE bench.timings (
    section text NOT NULL,
    model   text NOT NULL,
    n       integer NOT NULL,       -- basket size
    round   integer NOT NULL,
    ms      float8[] NOT NULL,
    busy    float8,
    load1   float8
);

-- the models of bench/speed/run's latency sections
CREATE TABLE bench.speed_models (
    model text PRIMARY KEY, dataset text, seed integer, rank integer, n_items integer,
    epochs integer, best_epoch integer, train_seconds float8,
    zero_task_factors bigint            -- task factors L2 decay drove to zero
);

CREATE TABLE bench.throughput (
    model text, clients integer, run integer, seconds integer, tps float8, latency_ms float8,
    busy float8, load1 float8
);

CREATE TABLE bench.gather (
    layout text, workers integer, run integer, lines bigint, seconds float8, scan_seconds float8,
    hwm_kb bigint, rss0_kb bigint, busy float8, load1 float8
);
