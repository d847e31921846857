-- mtdpp 0.1.0 -> 0.2.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.2.0'" to load this file. \quit

-- The view names its operators and functions by schema.
CREATE OR REPLACE VIEW mtdpp_models AS
SELECT m.name, m.version, m.kind, m.active,
       m.activated_at IS NOT NULL AND m.active
           AND m.activated_at OPERATOR(pg_catalog.=)
               (SELECT pg_catalog.max(a.activated_at) FROM mtdpp.models a WHERE a.active) AS is_default,
       m.rank, m.n_items AS items, m.n_baskets AS baskets, m.n_examples AS examples,
       m.final_loss, m.best_epoch, m.train_seconds,
       (m.metrics OPERATOR(pg_catalog.->>) 'mpr'::pg_catalog.text)::pg_catalog.float8 AS mpr,
       (m.metrics OPERATOR(pg_catalog.->>) 'precision_at_20'::pg_catalog.text)::pg_catalog.float8 AS precision_at_20,
       m.trained_at, m.model_id
FROM mtdpp.models m
ORDER BY m.name, m.version;

-- mtdpp_score gives NULL for the items of the basket.
COMMENT ON FUNCTION mtdpp_score(integer[], integer[], text) IS
    'score of each of ITEMS as the completion of BASKET, in the order given; NULL for items the model does not know and for items of BASKET';

-- The hyperparameter keys of mtdpp_train's params and of mtdpp_fit.
CREATE FUNCTION mtdpp_hyperparameters(kind text DEFAULT 'multitask')
RETURNS TABLE (key text, type text, default_value text, valid text, description text)
AS 'MODULE_PATHNAME', 'mtdpp_hyperparameters' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION mtdpp_hyperparameters(text) IS
    'every hyperparameter key, with its type, its default for KIND (as JSON), its valid values and what it does';

CREATE FUNCTION mtdpp_prune(name text, keep integer DEFAULT 3) RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_prune' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_prune(text, integer) IS
    'drops the versions of model NAME but its KEEP newest and its active one; returns the number of versions dropped';

-- Logical replication's apply worker fires row triggers, not statement
-- triggers, and only those enabled for replicas: these tell a subscriber's
-- sessions of every change it applies.
CREATE TRIGGER models_applied AFTER INSERT OR UPDATE OR DELETE ON mtdpp.models
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER items_applied AFTER INSERT OR UPDATE OR DELETE ON mtdpp.items
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER models_truncate_applied AFTER TRUNCATE ON mtdpp.models
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER items_truncate_applied AFTER TRUNCATE ON mtdpp.items
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.models_changed();
ALTER TABLE mtdpp.models ENABLE REPLICA TRIGGER models_applied;
ALTER TABLE mtdpp.items ENABLE REPLICA TRIGGER items_applied;
ALTER TABLE mtdpp.models ENABLE REPLICA TRIGGER models_truncate_applied;
ALTER TABLE mtdpp.items ENABLE REPLICA TRIGGER items_truncate_applied;

-- Which basket items drive a completion, and by how much.
CREATE FUNCTION mtdpp_explain(basket integer[], items integer[], model text DEFAULT NULL)
RETURNS TABLE (item_id integer, basket_item integer, contribution float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_explain' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_explain(integer[], integer[], text) IS
    'for each of ITEMS as a completion of BASKET, each basket item with how much the item''s score falls when that basket item is left out, largest first';

-- mtdpp_complete takes candidate filters (a query or view that calls it
-- must be dropped before the update and created again after it).
DROP FUNCTION mtdpp_complete(integer[], integer, text);
CREATE FUNCTION mtdpp_complete(basket integer[], k integer, model text DEFAULT NULL,
                               allowed integer[] DEFAULT NULL, excluded integer[] DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(integer[], integer, text, integer[], integer[]) IS
    'the K items that best complete BASKET, best first, never one of its items, only ALLOWED ones (NULL: any) and never EXCLUDED ones; for the DPP kinds score = ln(w det K), so P(y=1 | basket, item) = 1 - exp(-exp(score))';

-- mtdpp_train can start from the active version of its model.
DROP FUNCTION mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb);
CREATE FUNCTION mtdpp_train(
    name text,
    source regclass,
    order_col text DEFAULT 'order_id',
    item_col text DEFAULT 'item_id',
    position_col text DEFAULT NULL,
    rank integer DEFAULT NULL,
    epochs integer DEFAULT NULL,
    kind text DEFAULT 'multitask',
    target text DEFAULT 'random',
    seed bigint DEFAULT 0,
    verbose boolean DEFAULT false,
    activate boolean DEFAULT true,
    params jsonb DEFAULT '{}',
    warm_start boolean DEFAULT false)
RETURNS TABLE (model_id integer, name text, version integer, kind text, items integer,
               baskets integer, examples bigint, final_loss float8, best_epoch integer, seconds float8)
AS 'MODULE_PATHNAME', 'mtdpp_train' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean) IS
    'trains a model of NAME from the order lines of SOURCE and stores it as its next version; WARM_START starts from its active version';

-- A diverse set of completions, by greedy MAP in a DPP over the best ones.
CREATE FUNCTION mtdpp_complete_set(basket integer[], k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed integer[] DEFAULT NULL, excluded integer[] DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[]) IS
    'K items that complete BASKET together, in the order chosen: greedy MAP in a DPP whose qualities are the model''s scores and whose similarities the cosines of its item factors; DIVERSITY 0 is mtdpp_complete''s ranking, 1 as diverse as its best max(10K, 100) candidates allow; ALLOWED and EXCLUDED as for mtdpp_complete';
