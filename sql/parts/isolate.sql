-- Isolating the models by role, or lifting that: as the owner of the model
-- tables or a member of it.  OR REPLACE: the update to 0.6.0 replaces that
-- of 0.5.0, which did not map the rows of another cluster to the OIDs of
-- this one's roles (sql/parts/role_ids.sql).
CREATE OR REPLACE FUNCTION mtdpp_isolate("by" text DEFAULT 'role') RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tables_owner name := (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c
                          WHERE c.oid OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass);
BEGIN
    IF "by" IS NULL OR "by" NOT IN ('role', 'none') THEN
        RAISE EXCEPTION 'cannot isolate the models by %', pg_catalog.quote_nullable("by")
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'by => ''role'' keeps each role to the models it trained and those shared with it; by => ''none'' lifts that.';
    END IF;
    IF NOT pg_catalog.pg_has_role(tables_owner, 'USAGE') THEN
        RAISE EXCEPTION 'role "%" cannot change the isolation of the models', CURRENT_USER
            USING ERRCODE = 'insufficient_privilege',
                  HINT = pg_catalog.format('Only the owner of mtdpp.models, role %s, or a member of it can.',
                                           pg_catalog.quote_ident(tables_owner));
    END IF;
    PERFORM mtdpp.map_roles();
    DELETE FROM mtdpp.isolation;
    IF "by" OPERATOR(pg_catalog.=) 'role' THEN
        INSERT INTO mtdpp.isolation (isolated_by) VALUES ('role');
    END IF;
    RETURN "by";
END
$$;
COMMENT ON FUNCTION mtdpp_isolate(text) IS
    'isolates the models by role (BY => ''role''): each role sees, completes with and changes only the models it trained, and sees and completes with those shared with it (mtdpp_share); BY => ''none'' lifts it; pg_dump and pg_upgrade keep the state; maps the models and shares of another cluster (a restore, pg_upgrade) to the OIDs of the roles of their names, and records the present names of renamed roles';
