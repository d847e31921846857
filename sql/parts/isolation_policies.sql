-- Under isolation by role (a row in mtdpp.isolation), a role sees,
-- completes with and changes the models it trained, and sees and completes
-- with those shared with it; the policies on mtdpp.items follow those on
-- mtdpp.models.  Without it, they show every row, unless the DBA has
-- permissive policies of their own on the table: those then decide alone,
-- as they would on a table with no policies of mtdpp's.  A row is the
-- current role's by its OID where the row is of this cluster, else by its
-- name (sql/parts/role_ids.sql).  Each subquery that does not depend on
-- the row (the EXISTS on mtdpp.isolation or pg_policy, this cluster's
-- identifier, the current role's OID) runs once per query, not per row;
-- query time reads no model under these policies while they show every
-- row (store/cache.c).
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
ALTER TABLE mtdpp.items ENABLE ROW LEVEL SECURITY;
CREATE POLICY mtdpp_own ON mtdpp.models
    USING (CASE WHEN EXISTS (SELECT FROM mtdpp.isolation)
                THEN CASE WHEN role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                          THEN trained_by_oid OPERATOR(pg_catalog.=)
                               (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                          ELSE trained_by OPERATOR(pg_catalog.=) CURRENT_USER END
                ELSE NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
                                 WHERE p.polrelid OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass
                                   AND p.polpermissive
                                   AND p.polname OPERATOR(pg_catalog.<>) ALL (ARRAY['mtdpp_own', 'mtdpp_shared']::pg_catalog.name[]))
           END);
CREATE POLICY mtdpp_shared ON mtdpp.models FOR SELECT
    USING (EXISTS (SELECT FROM mtdpp.isolation)
           AND EXISTS (SELECT FROM mtdpp.model_readers r
                       WHERE r.name OPERATOR(pg_catalog.=) models.name
                         AND CASE WHEN r.role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                                       AND models.role_cluster OPERATOR(pg_catalog.=) r.role_cluster
                                  THEN r.trained_by_oid OPERATOR(pg_catalog.=) models.trained_by_oid
                                  ELSE r.trained_by OPERATOR(pg_catalog.=) models.trained_by END
                         AND (r.reader IS NULL OR mtdpp.is_member(r.reader, r.reader_oid, r.role_cluster))));
CREATE POLICY mtdpp_own ON mtdpp.items
    USING (CASE WHEN EXISTS (SELECT FROM mtdpp.isolation)
                THEN EXISTS (SELECT FROM mtdpp.models m
                             WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id
                               AND CASE WHEN m.role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                                        THEN m.trained_by_oid OPERATOR(pg_catalog.=)
                                             (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                                        ELSE m.trained_by OPERATOR(pg_catalog.=) CURRENT_USER END)
                ELSE NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
                                 WHERE p.polrelid OPERATOR(pg_catalog.=) 'mtdpp.items'::pg_catalog.regclass
                                   AND p.polpermissive
                                   AND p.polname OPERATOR(pg_catalog.<>) ALL (ARRAY['mtdpp_own', 'mtdpp_shared']::pg_catalog.name[]))
           END);
CREATE POLICY mtdpp_shared ON mtdpp.items FOR SELECT
    USING (EXISTS (SELECT FROM mtdpp.isolation)
           AND EXISTS (SELECT FROM mtdpp.models m WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id));

-- A role sees the shares it made, those made with it or a role it is a
-- member of, and those with every role; it adds, changes and takes back
-- its own.
CREATE POLICY readers_shown ON mtdpp.model_readers FOR SELECT
    USING (CASE WHEN role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                THEN trained_by_oid OPERATOR(pg_catalog.=)
                     (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                ELSE trained_by OPERATOR(pg_catalog.=) CURRENT_USER END
           OR reader IS NULL OR mtdpp.is_member(reader, reader_oid, role_cluster));
CREATE POLICY readers_added ON mtdpp.model_readers FOR INSERT
    WITH CHECK (CASE WHEN role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                     THEN trained_by_oid OPERATOR(pg_catalog.=)
                          (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                     ELSE trained_by OPERATOR(pg_catalog.=) CURRENT_USER END);
CREATE POLICY readers_removed ON mtdpp.model_readers FOR DELETE
    USING (CASE WHEN role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                THEN trained_by_oid OPERATOR(pg_catalog.=)
                     (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                ELSE trained_by OPERATOR(pg_catalog.=) CURRENT_USER END);
CREATE POLICY readers_renamed ON mtdpp.model_readers FOR UPDATE
    USING (CASE WHEN role_cluster OPERATOR(pg_catalog.=) (SELECT mtdpp.cluster_id())
                THEN trained_by_oid OPERATOR(pg_catalog.=)
                     (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                ELSE trained_by OPERATOR(pg_catalog.=) CURRENT_USER END);

-- While the models are isolated, a role that row-level security filters
-- may not write a row of a name another role's models hold, by mtdpp's
-- functions or by hand (store/isolation.c).
CREATE FUNCTION mtdpp.models_name_check() RETURNS trigger
    AS 'MODULE_PATHNAME', 'mtdpp_models_name_check' LANGUAGE C;
CREATE TRIGGER models_name_check BEFORE INSERT OR UPDATE ON mtdpp.models
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_name_check();
