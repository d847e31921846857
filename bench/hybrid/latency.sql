-- Latency of mtdpp_complete(basket, 10) for two models side by side on the
-- same baskets, interleaved: psql -v schema=uk_retail -v a=MODEL_A -v b=MODEL_B
-- -v n=500 -f bench/hybrid/latency.sql.  Each basket is a test basket without
-- its held-out item; every model is warmed (cached) first.
SELECT set_config('lat.a', :'a', false), set_config('lat.b', :'b', false);
CREATE TEMP TABLE lat (model text, ms float8);
CREATE TEMP TABLE lat_baskets AS
SELECT array_remove(basket, held_out) AS ctx FROM :"schema".test_baskets ORDER BY order_id LIMIT :n;
SELECT count(*) FROM mtdpp_complete((SELECT ctx FROM lat_baskets LIMIT 1), 10, :'a');
SELECT count(*) FROM mtdpp_complete((SELECT ctx FROM lat_baskets LIMIT 1), 10, :'b');
DO $$
DECLARE
	r record;
	m text;
	t0 timestamptz;
	n int;
BEGIN
	FOR r IN SELECT ctx FROM lat_baskets LOOP
		FOREACH m IN ARRAY ARRAY[current_setting('lat.a'), current_setting('lat.b')] LOOP
			t0 := clock_timestamp();
			SELECT count(*) INTO n FROM mtdpp_complete(r.ctx, 10, m);
			INSERT INTO lat VALUES (m, 1000 * extract(epoch FROM clock_timestamp() - t0));
		END LOOP;
	END LOOP;
END $$;
SELECT model, count(*) AS calls,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p99_ms
FROM lat GROUP BY model ORDER BY model;
