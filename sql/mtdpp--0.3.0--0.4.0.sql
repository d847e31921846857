-- mtdpp 0.3.0 -> 0.4.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.4.0'" to load this file. \quit

-- mtdpp_models reads mtdpp.models as the caller, not as its owner, so that
-- the caller's privileges and row-level security policies apply to it.
ALTER VIEW mtdpp_models SET (security_invoker = true);

-- The kinds rules (association rules mined from the training baskets),
-- poisson (Poisson factorisation), fm (a second-order factorization machine),
-- bayesian_lowrank (samples of the low-rank DPP's posterior) and gru (a recurrent network over a basket in add-to-cart order, whose shared
-- weights are a new column of mtdpp.models).
ALTER TABLE mtdpp.models DROP CONSTRAINT models_kind_check;
ALTER TABLE mtdpp.models ADD CONSTRAINT models_kind_check
    CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['multitask', 'multitask_nobias', 'logistic', 'lowrank',
                                                'itemknn', 'popularity', 'ease', 'hybrid', 'rules', 'poisson', 'fm',
                                                'bayesian_lowrank', 'gru']));
ALTER TABLE mtdpp.models ADD COLUMN weights real[];
COMMENT ON COLUMN mtdpp.models.weights IS 'the weights every item of the model shares, NULL for kinds without (gru: its recurrent weights W_x, W_h and b, 6 d^2 + 3 d of them at hidden size d = rank)';
COMMENT ON TABLE mtdpp.items IS 'one row per item of a model: popularity (training baskets holding it), bias D_i (gru: output bias), factors V_i (poisson: the expected item factors E[beta_i]; bayesian_lowrank: its samples of V_i side by side, samples x rank values; gru: input embedding), task factors R_i (multi-task kinds; gru: output embedding), co-occurring items and their weights (itemknn: cosine; ease: the closed-form item-item weights; hybrid: co-occurrence evidence beside the DPP factors; rules: the rules whose antecedent starts with the item, each its other antecedent items of weight minus the baskets holding the antecedent, then its consequent of weight its confidence; fm: the bias is the item''s weight w_i and the factors its embedding v_i)';

-- The arrays are stored as they are and left out of ANALYZE: their numbers
-- do not compress (pglz tried in vain on every value over 2 kB, a third of
-- the time item-kNN took to store 100 million lines' lists), and no query
-- filters on them.
ALTER TABLE mtdpp.items
    ALTER COLUMN factors SET STORAGE EXTERNAL, ALTER COLUMN factors SET STATISTICS 0,
    ALTER COLUMN task_factors SET STORAGE EXTERNAL, ALTER COLUMN task_factors SET STATISTICS 0,
    ALTER COLUMN neighbors SET STORAGE EXTERNAL, ALTER COLUMN neighbors SET STATISTICS 0,
    ALTER COLUMN neighbor_weights SET STORAGE EXTERNAL, ALTER COLUMN neighbor_weights SET STATISTICS 0;
ALTER TABLE mtdpp.models
    ALTER COLUMN weights SET STORAGE EXTERNAL, ALTER COLUMN weights SET STATISTICS 0;

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

-- Trainings in progress on the server, one row each, readable from any
-- session as pg_stat_progress_create_index is (mtdpp in
-- shared_preload_libraries; otherwise no rows, and a NOTICE says why).
-- Every role sees the pid and database of a training, its details only if
-- it may see the session's in pg_stat_activity.
CREATE FUNCTION mtdpp_progress_info(OUT pid integer, OUT datid oid, OUT model text, OUT kind text,
                                    OUT phase text, OUT rank integer, OUT epoch integer,
                                    OUT max_epochs integer, OUT validation_mpr float8,
                                    OUT lines bigint, OUT baskets integer, OUT items integer,
                                    OUT seconds float8, OUT seconds_left float8,
                                    OUT started timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'mtdpp_progress_info' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION mtdpp_progress_info() IS
    'the rows of the view mtdpp_progress: one per training in progress on the server';
CREATE FUNCTION mtdpp_progress_available()
RETURNS boolean
AS 'MODULE_PATHNAME', 'mtdpp_progress_available' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION mtdpp_progress_available() IS
    'whether this server reports its trainings in mtdpp_progress: true when mtdpp is in shared_preload_libraries';
CREATE VIEW mtdpp_progress AS
SELECT p.pid, p.datid, d.datname, p.model, p.kind, p.phase, p.rank, p.epoch, p.max_epochs,
       p.validation_mpr, p.lines, p.baskets, p.items, p.seconds, p.seconds_left, p.started
FROM mtdpp_progress_info() p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid;
COMMENT ON VIEW mtdpp_progress IS
    'one row per training in progress on the server: pid, database, model, kind, phase, rank, epoch of max_epochs, last validation MPR, lines, baskets, items, seconds so far and left (the current fit''s remaining epochs at their pace so far); needs mtdpp in shared_preload_libraries';
GRANT SELECT ON mtdpp_progress TO PUBLIC;
