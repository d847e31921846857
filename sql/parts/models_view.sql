-- The view of the stored models.  OR REPLACE: the update to 0.6.0 replaces
-- that of 0.5.0, adding columns at its end.
CREATE OR REPLACE VIEW mtdpp_models WITH (security_invoker = true) AS
SELECT m.name, m.version, m.kind, m.active,
       (m.active AND m.name OPERATOR(pg_catalog.=)
           CASE WHEN pg_catalog.current_setting('mtdpp.model', true) OPERATOR(pg_catalog.<>) ''
                THEN pg_catalog.current_setting('mtdpp.model', true)
                ELSE (SELECT pg_catalog.min(a.name) FROM mtdpp.models a WHERE a.active
                      HAVING pg_catalog.count(*) OPERATOR(pg_catalog.=) 1) END) IS TRUE AS is_default,
       m.rank, m.n_items AS items, m.n_baskets AS baskets, m.n_examples AS examples,
       m.final_loss, m.best_epoch, m.train_seconds,
       (m.metrics OPERATOR(pg_catalog.->>) 'mpr'::pg_catalog.text)::pg_catalog.float8 AS mpr,
       (m.metrics OPERATOR(pg_catalog.->>) 'precision_at_20'::pg_catalog.text)::pg_catalog.float8 AS precision_at_20,
       m.trained_at, m.model_id, COALESCE(m.item_type, 'integer') AS item_type,
       (m.test OPERATOR(pg_catalog.->>) 'mpr'::pg_catalog.text)::pg_catalog.float8 AS test_mpr,
       (m.promotion OPERATOR(pg_catalog.->>) 'promoted'::pg_catalog.text)::pg_catalog.bool AS promoted,
       m.promotion
FROM mtdpp.models m
ORDER BY m.name, m.version;
COMMENT ON VIEW mtdpp_models IS 'every stored model, with the default one marked: the active version of the model mtdpp.model names, or of the only model with an active version when it names none (it answers calls that name no model); test_mpr, its MPR on the baskets its training held out; promoted and promotion, what its promotion rule decided';
