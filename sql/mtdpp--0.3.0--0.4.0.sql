-- mtdpp 0.3.0 -> 0.4.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.4.0'" to load this file. \quit

-- mtdpp_models reads mtdpp.models as the caller, not as its owner, so that
-- the caller's privileges and row-level security policies apply to it.
ALTER VIEW mtdpp_models SET (security_invoker = true);

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
