-- A role shares its models with other roles, while the models are
-- isolated, through rows of mtdpp.model_readers.  OR REPLACE: the update to
-- 0.6.0 replaces those of 0.5.0.
CREATE OR REPLACE FUNCTION mtdpp_share(model text, reader text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    role_name name := CASE WHEN reader OPERATOR(pg_catalog.=) 'public' THEN NULL ELSE reader END;
    here bigint := mtdpp.cluster_id();
    me oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER);
    role_oid oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) role_name);
    added integer;
BEGIN
    IF model IS NULL OR reader IS NULL THEN
        RAISE EXCEPTION 'mtdpp_share: model and reader must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'reader => ''public'' shares with every role.';
    END IF;
    -- a model, and a share, is the role's by its OID where it is of this
    -- cluster, else by its name (sql/parts/role_ids.sql)
    IF NOT EXISTS (SELECT FROM mtdpp.models m WHERE m.name OPERATOR(pg_catalog.=) model
                   AND CASE WHEN m.role_cluster OPERATOR(pg_catalog.=) here
                            THEN m.trained_by_oid OPERATOR(pg_catalog.=) me
                            ELSE m.trained_by OPERATOR(pg_catalog.=) CURRENT_USER END) THEN
        RAISE EXCEPTION 'role "%" has no model "%" to share', CURRENT_USER, model
            USING ERRCODE = 'undefined_object',
                  HINT = 'A role shares the models it trained: SELECT name FROM mtdpp_models lists the models it sees.';
    END IF;
    IF role_name IS NOT NULL AND NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
                                             WHERE r.rolname OPERATOR(pg_catalog.=) role_name) THEN
        RAISE EXCEPTION 'role "%" does not exist', reader
            USING ERRCODE = 'undefined_object', HINT = 'reader => ''public'' shares with every role.';
    END IF;
    -- shared already, maybe under a name the role had before a rename
    IF EXISTS (SELECT FROM mtdpp.model_readers r WHERE r.name OPERATOR(pg_catalog.=) model
               AND CASE WHEN r.role_cluster OPERATOR(pg_catalog.=) here
                        THEN r.trained_by_oid OPERATOR(pg_catalog.=) me
                             AND r.reader_oid IS NOT DISTINCT FROM role_oid
                        ELSE r.trained_by OPERATOR(pg_catalog.=) CURRENT_USER
                             AND r.reader IS NOT DISTINCT FROM role_name END) THEN
        RETURN false;
    END IF;
    INSERT INTO mtdpp.model_readers (name, trained_by, reader) VALUES (model, CURRENT_USER, role_name)
        ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    RETURN added OPERATOR(pg_catalog.>) 0;
END
$$;
COMMENT ON FUNCTION mtdpp_share(text, text) IS
    'lets READER (a role, or ''public'': every role) see and complete with the caller''s models MODEL while the models are isolated by role, present versions and later ones; returns false if it already could';

CREATE OR REPLACE FUNCTION mtdpp_unshare(model text, reader text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    role_name name := CASE WHEN reader OPERATOR(pg_catalog.=) 'public' THEN NULL ELSE reader END;
    here bigint := mtdpp.cluster_id();
    me oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER);
    role_oid oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) role_name);
    removed integer;
BEGIN
    IF model IS NULL OR reader IS NULL THEN
        RAISE EXCEPTION 'mtdpp_unshare: model and reader must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'reader => ''public'' takes back a share with every role.';
    END IF;
    -- the reader by its OID where the share is of this cluster and the
    -- role exists, else by its name
    DELETE FROM mtdpp.model_readers r
        WHERE r.name OPERATOR(pg_catalog.=) mtdpp_unshare.model
          AND CASE WHEN r.role_cluster OPERATOR(pg_catalog.=) here
                   THEN r.trained_by_oid OPERATOR(pg_catalog.=) me
                        AND CASE WHEN role_name IS NULL THEN r.reader_oid IS NULL
                                 WHEN role_oid IS NULL THEN r.reader OPERATOR(pg_catalog.=) role_name
                                 ELSE r.reader_oid OPERATOR(pg_catalog.=) role_oid END
                   ELSE r.trained_by OPERATOR(pg_catalog.=) CURRENT_USER
                        AND r.reader IS NOT DISTINCT FROM role_name END;
    GET DIAGNOSTICS removed = ROW_COUNT;
    RETURN removed OPERATOR(pg_catalog.>) 0;
END
$$;
COMMENT ON FUNCTION mtdpp_unshare(text, text) IS
    'takes back a share of mtdpp_share: READER no longer sees the caller''s models MODEL; returns false if there was none';
