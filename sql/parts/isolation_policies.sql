-- Under isolation by role (a row in mtdpp.isolation), a role sees,
-- completes with and changes the models it trained, and sees and completes
-- with those shared with it; the policies on mtdpp.items follow those on
-- mtdpp.models.  Without it, they show every row, unless the DBA has
-- permissive policies of their own on the table: those then decide alone,
-- as they would on a table with no policies of mtdpp's.  Each EXISTS on
-- mtdpp.isolation or pg_policy runs once per query, not per row; query time
-- reads no model under these policies while they show every row
-- (store/cache.c).
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
ALTER TABLE mtdpp.items ENABLE ROW LEVEL SECURITY;
CREATE POLICY mtdpp_own ON mtdpp.models
    USING (CASE WHEN EXISTS (SELECT FROM mtdpp.isolation)
                THEN trained_by OPERATOR(pg_catalog.=) CURRENT_USER
                ELSE NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
                                 WHERE p.polrelid OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass
                                   AND p.polpermissive
                                   AND p.polname OPERATOR(pg_catalog.<>) ALL (ARRAY['mtdpp_own', 'mtdpp_shared']::pg_catalog.name[]))
           END);
CREATE POLICY mtdpp_shared ON mtdpp.models FOR SELECT
    USING (EXISTS (SELECT FROM mtdpp.isolation)
           AND EXISTS (SELECT FROM mtdpp.model_readers r
                       WHERE r.name OPERATOR(pg_catalog.=) models.name
                         AND r.trained_by OPERATOR(pg_catalog.=) models.trained_by
                         AND (r.reader IS NULL OR mtdpp.is_member(r.reader))));
CREATE POLICY mtdpp_own ON mtdpp.items
    USING (CASE WHEN EXISTS (SELECT FROM mtdpp.isolation)
                THEN EXISTS (SELECT FROM mtdpp.models m
                             WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id
                               AND m.trained_by OPERATOR(pg_catalog.=) CURRENT_USER)
                ELSE NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
                                 WHERE p.polrelid OPERATOR(pg_catalog.=) 'mtdpp.items'::pg_catalog.regclass
                                   AND p.polpermissive
                                   AND p.polname OPERATOR(pg_catalog.<>) ALL (ARRAY['mtdpp_own', 'mtdpp_shared']::pg_catalog.name[]))
           END);
CREATE POLICY mtdpp_shared ON mtdpp.items FOR SELECT
    USING (EXISTS (SELECT FROM mtdpp.isolation)
           AND EXISTS (SELECT FROM mtdpp.models m WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id));

-- While the models are isolated, a role that row-level security filters
-- may not write a row of a name another role's models hold, by mtdpp's
-- functions or by hand (store/isolation.c).
CREATE FUNCTION mtdpp.models_name_check() RETURNS trigger
    AS 'MODULE_PATHNAME', 'mtdpp_models_name_check' LANGUAGE C;
CREATE TRIGGER models_name_check BEFORE INSERT OR UPDATE ON mtdpp.models
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_name_check();
