-- mtdpp 0.2.0 -> 0.3.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.3.0'" to load this file. \quit

-- Two more model kinds: ease (closed-form item-item weights) and hybrid
-- (the multi-task DPP with co-occurrence evidence).
ALTER TABLE mtdpp.models DROP CONSTRAINT models_kind_check;
ALTER TABLE mtdpp.models ADD CONSTRAINT models_kind_check
    CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['multitask', 'multitask_nobias', 'logistic', 'lowrank',
                                                'itemknn', 'popularity', 'ease', 'hybrid']));

COMMENT ON TABLE mtdpp.items IS 'one row per item of a model: popularity (training baskets holding it), bias D_i, factors V_i, task factors R_i (multi-task kinds), co-occurring items and their weights (itemknn: cosine; ease: the closed-form item-item weights; hybrid: co-occurrence evidence beside the DPP factors)';

-- The models every backend of the server shares (mtdpp in
-- shared_preload_libraries): one row per copy in shared memory.  Like the
-- statistics views, for monitoring roles: it shows every database's.
CREATE FUNCTION mtdpp_shared_models()
RETURNS TABLE (database name, model_id integer, items integer, rank integer,
               bytes bigint, backends integer, state text)
AS 'MODULE_PATHNAME', 'mtdpp_shared_models' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION mtdpp_shared_models() IS
    'the models held once in the server''s shared memory for every backend: database, model_id, items, rank, bytes, backends that map the copy, and whether it is ready or still being read; no rows unless mtdpp is in shared_preload_libraries';
REVOKE ALL ON FUNCTION mtdpp_shared_models() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mtdpp_shared_models() TO pg_monitor;
