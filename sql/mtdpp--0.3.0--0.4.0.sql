-- mtdpp 0.3.0 -> 0.4.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.4.0'" to load this file. \quit

-- mtdpp_models reads mtdpp.models as the caller, not as its owner, so that
-- the caller's privileges and row-level security policies apply to it.
ALTER VIEW mtdpp_models SET (security_invoker = true);

-- The kind rules: association rules mined from the training baskets.
ALTER TABLE mtdpp.models DROP CONSTRAINT models_kind_check;
ALTER TABLE mtdpp.models ADD CONSTRAINT models_kind_check
    CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['multitask', 'multitask_nobias', 'logistic', 'lowrank',
                                                'itemknn', 'popularity', 'ease', 'hybrid', 'rules']));
COMMENT ON TABLE mtdpp.items IS 'one row per item of a model: popularity (training baskets holding it), bias D_i, factors V_i, task factors R_i (multi-task kinds), co-occurring items and their weights (itemknn: cosine; ease: the closed-form item-item weights; hybrid: co-occurrence evidence beside the DPP factors; rules: the rules whose antecedent starts with the item, each its other antecedent items of weight minus the baskets holding the antecedent, then its consequent of weight its confidence)';

CREATE FUNCTION mtdpp_rules(model text DEFAULT NULL)
RETURNS TABLE (antecedent integer[], consequent integer, support float8, confidence float8, lift float8)
AS 'MODULE_PATHNAME', 'mtdpp_rules' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_rules(text) IS
    'the association rules of MODEL (kind rules; default: the default model): ANTECEDENT (item ids) -> CONSEQUENT, SUPPORT (share of training baskets holding both), CONFIDENCE (share of the baskets holding the antecedent that hold the consequent) and LIFT (confidence over the consequent''s share of baskets); only the rules more confident than every rule from part of their antecedent are kept';

-- Without a kind, mtdpp_train and mtdpp_fit train the hybrid: the multi-task
-- DPP with co-occurrence evidence.  Models already trained keep their kind.
CREATE OR REPLACE FUNCTION mtdpp_train(
    name text,
    source regclass,
    order_col text DEFAULT 'order_id',
    item_col text DEFAULT 'item_id',
    position_col text DEFAULT NULL,
    rank integer DEFAULT NULL,
    epochs integer DEFAULT NULL,
    kind text DEFAULT 'hybrid',
    target text DEFAULT 'random',
    seed bigint DEFAULT 0,
    verbose boolean DEFAULT false,
    activate boolean DEFAULT true,
    params jsonb DEFAULT '{}',
    warm_start boolean DEFAULT false)
RETURNS TABLE (model_id integer, name text, version integer, kind text, items integer,
               baskets integer, examples bigint, final_loss float8, best_epoch integer, seconds float8)
AS 'MODULE_PATHNAME', 'mtdpp_train' LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION mtdpp_hyperparameters(kind text DEFAULT 'hybrid')
RETURNS TABLE (key text, type text, default_value text, valid text, description text)
AS 'MODULE_PATHNAME', 'mtdpp_hyperparameters' LANGUAGE C IMMUTABLE PARALLEL SAFE;
