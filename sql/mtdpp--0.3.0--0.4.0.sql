-- mtdpp 0.3.0 -> 0.4.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.4.0'" to load this file. \quit

-- mtdpp_models reads mtdpp.models as the caller, not as its owner, so that
-- the caller's privileges and row-level security policies apply to it.
ALTER VIEW mtdpp_models SET (security_invoker = true);

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
