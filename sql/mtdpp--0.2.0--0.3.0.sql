-- mtdpp 0.2.0 -> 0.3.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.3.0'" to load this file. \quit

-- Two more model kinds: ease (closed-form item-item weights) and hybrid
-- (the multi-task DPP with co-occurrence evidence).
ALTER TABLE mtdpp.models DROP CONSTRAINT models_kind_check;
ALTER TABLE mtdpp.models ADD CONSTRAINT models_kind_check
    CHECK (kind OPERATOR(pg_catalog.=) ANY (ARRAY['multitask', 'multitask_nobias', 'logistic', 'lowrank',
                                                'itemknn', 'popularity', 'ease', 'hybrid']));

COMMENT ON TABLE mtdpp.items IS 'one row per item of a model: popularity (training baskets holding it), bias D_i, factors V_i, task factors R_i (multi-task kinds), co-occurring items and their weights (itemknn: cosine; ease: the closed-form item-item weights; hybrid: co-occurrence evidence beside the DPP factors)';
