-- Latency of a 10-item diverse set against today's top 10 (bench/diversity/run
-- runs it): model br64 (belgian_retail, multitask, rank 64), the first
-- :n test baskets without their held-out item, each basket asked both ways
-- in turn (diversity 0.5), after one warm-up call that loads the model.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE TEMP TABLE lat (fn text, ms float8);
SELECT count(*) FROM mtdpp_complete(ARRAY[1], 10, 'br64');
DO $$
DECLARE
    ctx int[];
    t0 timestamptz;
BEGIN
    FOR ctx IN SELECT array_remove(basket, held_out) FROM br.test_baskets ORDER BY order_id LIMIT current_setting('bench.n')::int
    LOOP
        t0 := clock_timestamp();
        PERFORM count(*) FROM mtdpp_complete(ctx, 10, 'br64');
        INSERT INTO lat VALUES ('top10', 1000 * extract(epoch FROM clock_timestamp() - t0));
        t0 := clock_timestamp();
        PERFORM count(*) FROM mtdpp_complete_set(ctx, 10, 'br64', 0.5);
        INSERT INTO lat VALUES ('set10', 1000 * extract(epoch FROM clock_timestamp() - t0));
    END LOOP;
END $$;
\pset format unaligned
\pset fieldsep ' '
\pset tuples_only on
\o :out
SELECT fn, count(*), round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms))::numeric, 3),
       round((percentile_cont(0.9) WITHIN GROUP (ORDER BY ms))::numeric, 3)
FROM lat GROUP BY fn ORDER BY fn DESC;
\o
