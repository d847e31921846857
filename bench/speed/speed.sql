-- bench/speed: helpers and result tables (schema speed), loaded by bench/speed/run.
--
-- Every timing below is taken inside the server with clock_timestamp(), so it
-- covers planning and running one `PERFORM * FROM mtdpp_complete(...)` and
-- nothing of the client or the network.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS speed CASCADE;
CREATE SCHEMA speed;

-- basket[1:n] of the test baskets holding at least n items, numbered from 0
-- in order_id order (calls reuse them cyclically).
CREATE TABLE speed.baskets (
    ds     text NOT NULL,
    n      int NOT NULL,
    i      int NOT NULL,
    basket int[] NOT NULL,
    PRIMARY KEY (ds, n, i)
);

CREATE FUNCTION speed.fill_baskets(dsname text, nn int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE c int;
BEGIN
  DELETE FROM speed.baskets WHERE ds = dsname AND n = nn;
  EXECUTE format('INSERT INTO speed.baskets
                  SELECT %L, %s, (row_number() OVER (ORDER BY order_id))::int - 1, basket[1:%s]
                  FROM %I.test_baskets WHERE cardinality(basket) >= %s',
                 dsname, nn, nn, dsname, nn);
  GET DIAGNOSTICS c = ROW_COUNT;
  RETURN c;
END $$;

-- milliseconds of each of CALLS completions of basket[1:NN] prefixes, after
-- one warm-up call (which loads the model into the backend's cache)
CREATE FUNCTION speed.latency(model text, dsname text, nn int, calls int, k int DEFAULT 10)
RETURNS float8[] LANGUAGE plpgsql AS $$
DECLARE
  nb int; b int[]; t0 timestamptz; out float8[] := '{}';
BEGIN
  SELECT count(*) INTO nb FROM speed.baskets WHERE ds = dsname AND n = nn;
  IF nb = 0 THEN RETURN NULL; END IF;
  SELECT basket INTO b FROM speed.baskets WHERE ds = dsname AND n = nn AND i = 0;
  PERFORM * FROM mtdpp_complete(b, k, model);
  FOR c IN 0 .. calls - 1 LOOP
    SELECT basket INTO b FROM speed.baskets WHERE ds = dsname AND n = nn AND i = c % nb;
    t0 := clock_timestamp();
    PERFORM * FROM mtdpp_complete(b, k, model);
    out := out || (extract(epoch FROM clock_timestamp() - t0) * 1000)::float8;
  END LOOP;
  RETURN out;
END $$;

-- the same with no pruning: every item of the model scored (mtdpp_score of
-- the whole catalog; it also returns one row per item)
CREATE FUNCTION speed.full_latency(model text, dsname text, nn int, calls int)
RETURNS float8[] LANGUAGE plpgsql AS $$
DECLARE
  nb int; b int[]; t0 timestamptz; out float8[] := '{}'; all_items int[];
BEGIN
  SELECT array_agg(it.item_id ORDER BY it.item_id) INTO all_items
  FROM mtdpp.items it JOIN mtdpp.models m USING (model_id)
  WHERE m.name = model AND m.active;
  SELECT count(*) INTO nb FROM speed.baskets WHERE ds = dsname AND n = nn;
  IF nb = 0 THEN RETURN NULL; END IF;
  SELECT basket INTO b FROM speed.baskets WHERE ds = dsname AND n = nn AND i = 0;
  PERFORM * FROM mtdpp_score(b, all_items, model);
  FOR c IN 0 .. calls - 1 LOOP
    SELECT basket INTO b FROM speed.baskets WHERE ds = dsname AND n = nn AND i = c % nb;
    t0 := clock_timestamp();
    PERFORM * FROM mtdpp_score(b, all_items, model);
    out := out || (extract(epoch FROM clock_timestamp() - t0) * 1000)::float8;
  END LOOP;
  RETURN out;
END $$;

-- milliseconds of one completion (the first basket of size NN)
CREATE FUNCTION speed.one_call(model text, dsname text, nn int) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE b int[]; t0 timestamptz;
BEGIN
  SELECT basket INTO b FROM speed.baskets WHERE ds = dsname AND n = nn AND i = 0;
  t0 := clock_timestamp();
  PERFORM * FROM mtdpp_complete(b, 10, model);
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- flops of scoring one candidate against a context of b items, multi-task
-- kinds: the packed kernel from one GEMM (b(b+1)/2 entries, rank
-- multiply-adds each) plus its Cholesky factorisation (b^3/3)
CREATE FUNCTION speed.kernel_flops(b float8, rank int) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT b * (b + 1) / 2 * rank * 2 + b ^ 3 / 3 $$;

-- mean over the calls of a latency run of the unpruned work: per call,
-- (items of the model - known basket items) candidates of
-- kernel_flops(known basket items); unknown items are ignored by
-- mtdpp_complete, so they cost nothing
CREATE FUNCTION speed.call_flops(model text, dsname text, nn int, calls int) RETURNS float8
LANGUAGE sql STABLE AS $$
  WITH m AS (SELECT model_id, rank, n_items FROM mtdpp.models WHERE name = model AND active),
       used AS (SELECT b.i, b.basket FROM speed.baskets b
                WHERE b.ds = dsname AND b.n = nn
                  AND b.i < least(calls, (SELECT count(*) FROM speed.baskets c WHERE c.ds = dsname AND c.n = nn))),
       known AS (SELECT u.i, count(DISTINCT it.item_id) AS b
                 FROM used u CROSS JOIN m
                 LEFT JOIN LATERAL unnest(u.basket) x(item) ON true
                 LEFT JOIN mtdpp.items it ON it.model_id = m.model_id AND it.item_id = x.item
                 GROUP BY u.i)
  SELECT avg((m.n_items - k.b) * speed.kernel_flops(k.b, m.rank)) FROM known k, m
$$;

-- mean flops of the forward pass per training example (one target of one
-- context): over the training baskets of at least 2 items, each yields
-- min(len, positives) contexts (every item when positives = 0) of
-- b = min(len - 1, max_context) items, each context scored against
-- 1 + negatives targets
CREATE FUNCTION speed.train_forward_flops(dsname text, model_id int) RETURNS float8
LANGUAGE plpgsql STABLE AS $$
DECLARE
  hp jsonb; r int; pos int; maxc int; f float8;
BEGIN
  SELECT m.hyperparams, m.rank INTO hp, r FROM mtdpp.models m WHERE m.model_id = train_forward_flops.model_id;
  pos := coalesce((hp ->> 'positives')::int, 0);
  maxc := coalesce((hp ->> 'max_context')::int, 100);
  EXECUTE format($q$
    WITH b AS (SELECT count(*)::int AS len FROM %I.train_lines GROUP BY order_id HAVING count(*) >= 2),
         c AS (SELECT CASE WHEN $1 = 0 OR $1 >= len THEN len ELSE $1 END AS ctxs,
                      least(len - 1, $2) AS bb FROM b)
    SELECT sum(ctxs * speed.kernel_flops(bb, $3)) / sum(ctxs) FROM c $q$, dsname)
    INTO f USING pos, maxc, r;
  RETURN f;
END $$;

-- results
CREATE TABLE speed.blas (
    id serial, coretype text, name text, m int, n int, k int, best float8, mean float8
);
-- the latency models: dataset, seed of its split (loaded as schema
-- <dataset>_s<seed>), how training went, and how many of its task factors
-- are zero
CREATE TABLE speed.lat_model (
    ord int, model text PRIMARY KEY, ds text, seed int, schema text, rank int, n_items int,
    epochs int, best_epoch int, train_seconds float8, zero_task_factors bigint
);
CREATE TABLE speed.lat (
    id serial PRIMARY KEY, what text, env text, model text, ds text, seed int, rank int, n_items int,
    n int, baskets int, calls int, p50 float8, p99 float8, mean float8, flops float8,
    others float8, load1 float8, p99_rounds float8[]
);
CREATE TABLE speed.lat_round (
    what text, env text, model text, n int, round int, x float8[], others float8, load1 float8
);
CREATE TABLE speed.first (
    model text, ds text, rank int, reps int, after_change float8[], new_session float8[],
    steady float8[], new_loaded float8[], others float8, load1 float8
);
CREATE TABLE speed.tput (
    model text, clients int, run int, seconds int, tps float8, latency_ms float8, others float8, load1 float8
);
CREATE TABLE speed.train (
    ds text, model_id int, catalog int, n_items int, rank int, wall float8, train_seconds float8,
    epochs int, best_epoch int, examples bigint, fwd_flops float8, mpr float8, p20 float8,
    others float8, load1 float8
);
CREATE TABLE speed.load (
    layout text, workers int, run int, seconds float8, workers_seen int, hwm_kb bigint, rss0_kb bigint,
    anon_peak_kb bigint, anon0_kb bigint, shmem_peak_kb bigint, worker_hwm_kb bigint, others float8, load1 float8,
    scan_seconds float8, polled_seconds float8
);
