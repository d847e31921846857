-- The test helper the library holds and the extension does not declare:
-- the largest relative difference between the trainer's analytic gradients
-- of the multi-task loss and finite differences, on a random model.
CREATE FUNCTION gradient_check(rank integer, context_size integer, seed bigint DEFAULT 0,
                               softmax boolean DEFAULT true)
RETURNS float8 AS '$libdir/mtdpp', 'mtdpp_gradient_check' LANGUAGE C STRICT VOLATILE;
-- Planted baskets shared by the regression tests: 60 items in 6 groups of
-- 10; every basket draws 3 to 6 items from one group.  Orders 1-500 train,
-- 501-600 test (the last item added is held out).
CREATE TABLE lines AS
SELECT o AS order_id, (o % 6) * 10 + (o * 7 + k * 3) % 10 + 1 AS item_id, k AS pos
FROM generate_series(1, 600) o, generate_series(1, 3 + o % 4) k;
CREATE VIEW train_lines AS SELECT * FROM lines WHERE order_id <= 500;
CREATE VIEW test_baskets AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket,
       (array_agg(item_id ORDER BY pos DESC))[1] AS held_out
FROM lines WHERE order_id > 500 GROUP BY order_id;
SELECT count(*) AS lines, count(DISTINCT item_id) AS items, count(DISTINCT order_id) AS orders FROM lines;
-- the extension's objects
SELECT p.oid::regprocedure AS function, pg_get_function_result(p.oid) AS returns
FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'mtdpp') AND d.deptype = 'e'
ORDER BY p.oid::regprocedure::text;
SELECT proname, provolatile, proparallel FROM pg_proc
WHERE proname IN ('mtdpp_complete', 'mtdpp_score', 'mtdpp_train', 'mtdpp_evaluate', 'mtdpp_fit')
ORDER BY proname;
