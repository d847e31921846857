-- A model, and a share, belongs to a role by its OID (0.6.0): a role keeps
-- its models and shares through ALTER ROLE ... RENAME, and a role created
-- later with a dropped role's name gets none of them.  The names stay
-- beside the OIDs, as what a reader sees and what a restore into another
-- cluster maps back by: OIDs mean something only in the cluster that
-- wrote them (and its physical standbys), which role_cluster names by the
-- system identifier of its pg_control.  A row of another cluster (a
-- restore, pg_upgrade, a logical subscriber) belongs to the role of its
-- name until one of the points below maps it to that role's OID.
CREATE FUNCTION mtdpp.cluster_id() RETURNS bigint
    AS 'MODULE_PATHNAME', 'mtdpp_cluster_id' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION mtdpp.cluster_id() IS
    'the system identifier of this cluster (pg_control), as bigint: the role_cluster of the rows whose role OIDs are this cluster''s';

ALTER TABLE mtdpp.models ADD COLUMN trained_by_oid oid, ADD COLUMN role_cluster bigint;
COMMENT ON COLUMN mtdpp.models.trained_by IS 'the name of the role that trained it: whose it is where role_cluster is not this cluster''s, else the name its trainer had when the row was last written';
COMMENT ON COLUMN mtdpp.models.trained_by_oid IS 'the OID of the role that trained it, in the cluster role_cluster names';
COMMENT ON COLUMN mtdpp.models.role_cluster IS 'the system identifier of the cluster whose role trained_by_oid is (mtdpp.cluster_id()); NULL or another cluster''s: the model is the role''s named trained_by';
ALTER TABLE mtdpp.model_readers ADD COLUMN trained_by_oid oid, ADD COLUMN reader_oid oid,
    ADD COLUMN role_cluster bigint;
COMMENT ON COLUMN mtdpp.model_readers.trained_by_oid IS 'the OID of the role whose models NAME are shared, in the cluster role_cluster names';
COMMENT ON COLUMN mtdpp.model_readers.reader_oid IS 'the OID of the role they are shared with, NULL for every role';
COMMENT ON COLUMN mtdpp.model_readers.role_cluster IS 'the system identifier of the cluster whose roles the OIDs are; NULL or another cluster''s: the share is by the names trained_by and reader';

-- Before a row of mtdpp.models is written: a row of this cluster keeps its
-- OID, and its name follows the role's; a row of another cluster, or one
-- whose name was changed by hand, is mapped to the OID of the role of its
-- name where one exists, else it stays the name's (a restore into a
-- cluster that lacks the role).
CREATE FUNCTION mtdpp.models_role() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    here bigint := mtdpp.cluster_id();
    found_oid oid;
    found_name name;
BEGIN
    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE'
       AND NEW.trained_by OPERATOR(pg_catalog.<>) OLD.trained_by
       AND NEW.trained_by_oid IS NOT DISTINCT FROM OLD.trained_by_oid
       AND NEW.role_cluster IS NOT DISTINCT FROM OLD.role_cluster THEN
        NEW.role_cluster := NULL;
    END IF;
    IF NEW.role_cluster OPERATOR(pg_catalog.=) here AND NEW.trained_by_oid IS NOT NULL THEN
        SELECT r.rolname INTO found_name FROM pg_catalog.pg_roles r
        WHERE r.oid OPERATOR(pg_catalog.=) NEW.trained_by_oid;
        IF found_name IS NOT NULL THEN
            NEW.trained_by := found_name;
        END IF;
        RETURN NEW;
    END IF;
    SELECT r.oid INTO found_oid FROM pg_catalog.pg_roles r
    WHERE r.rolname OPERATOR(pg_catalog.=) NEW.trained_by;
    IF found_oid IS NOT NULL THEN
        NEW.trained_by_oid := found_oid;
        NEW.role_cluster := here;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER models_by_role BEFORE INSERT OR UPDATE ON mtdpp.models
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_role();

-- The same for mtdpp.model_readers, whose row is mapped once both its
-- roles exist (the reader NULL: every role).  A share of the same names
-- whose trainer or reader was dropped from this cluster is of no role any
-- more: a new share of a role of that name takes its place (as the tables'
-- owner, whom no policy hides it from).
CREATE FUNCTION mtdpp.readers_role() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    here bigint := mtdpp.cluster_id();
    trainer_found oid;
    reader_found oid;
    trainer_name name;
    reader_name name;
    dead pg_catalog.tid[];
BEGIN
    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE'
       AND (NEW.trained_by, NEW.reader) IS DISTINCT FROM (OLD.trained_by, OLD.reader)
       AND NEW.trained_by_oid IS NOT DISTINCT FROM OLD.trained_by_oid
       AND NEW.reader_oid IS NOT DISTINCT FROM OLD.reader_oid
       AND NEW.role_cluster IS NOT DISTINCT FROM OLD.role_cluster THEN
        NEW.role_cluster := NULL;
    END IF;
    IF NEW.role_cluster OPERATOR(pg_catalog.=) here AND NEW.trained_by_oid IS NOT NULL
       AND (NEW.reader IS NULL) OPERATOR(pg_catalog.=) (NEW.reader_oid IS NULL) THEN
        SELECT r.rolname INTO trainer_name FROM pg_catalog.pg_roles r
        WHERE r.oid OPERATOR(pg_catalog.=) NEW.trained_by_oid;
        SELECT r.rolname INTO reader_name FROM pg_catalog.pg_roles r
        WHERE r.oid OPERATOR(pg_catalog.=) NEW.reader_oid;
        IF trainer_name IS NOT NULL AND (NEW.reader_oid IS NULL OR reader_name IS NOT NULL) THEN
            NEW.trained_by := trainer_name;
            NEW.reader := reader_name;
        END IF;
    ELSE
        SELECT r.oid INTO trainer_found FROM pg_catalog.pg_roles r
        WHERE r.rolname OPERATOR(pg_catalog.=) NEW.trained_by;
        SELECT r.oid INTO reader_found FROM pg_catalog.pg_roles r
        WHERE r.rolname OPERATOR(pg_catalog.=) NEW.reader;
        IF trainer_found IS NOT NULL AND (NEW.reader IS NULL OR reader_found IS NOT NULL) THEN
            NEW.trained_by_oid := trainer_found;
            NEW.reader_oid := reader_found;
            NEW.role_cluster := here;
        END IF;
    END IF;
    -- (found first: a DELETE that finds nothing still fails where a
    -- publication publishes the deletes of a table with no replica identity)
    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' THEN
        SELECT pg_catalog.array_agg(d.ctid) INTO dead FROM mtdpp.model_readers d
        WHERE d.name OPERATOR(pg_catalog.=) NEW.name
          AND d.trained_by OPERATOR(pg_catalog.=) NEW.trained_by
          AND d.reader IS NOT DISTINCT FROM NEW.reader
          AND d.role_cluster OPERATOR(pg_catalog.=) here
          AND NOT (EXISTS (SELECT FROM pg_catalog.pg_roles r
                           WHERE r.oid OPERATOR(pg_catalog.=) d.trained_by_oid)
                   AND (d.reader_oid IS NULL
                        OR EXISTS (SELECT FROM pg_catalog.pg_roles r
                                   WHERE r.oid OPERATOR(pg_catalog.=) d.reader_oid)));
        IF dead IS NOT NULL THEN
            DELETE FROM mtdpp.model_readers d WHERE d.ctid OPERATOR(pg_catalog.=) ANY (dead);
        END IF;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER readers_by_role BEFORE INSERT OR UPDATE ON mtdpp.model_readers
    FOR EACH ROW EXECUTE FUNCTION mtdpp.readers_role();

-- Maps every row that the triggers above would change: rows of another
-- cluster whose roles exist here, and rows whose roles were renamed since
-- they were written (so that a dump carries the names of today).  The
-- update to 0.6.0 runs it on the rows it finds, mtdpp_isolate and the
-- training of a model run it, and so does every ALTER TABLE of a model
-- table, by the event trigger below: pg_restore -a --disable-triggers
-- ends each table's data with ALTER TABLE ... ENABLE TRIGGER ALL.  As the
-- tables' owner, whom no policy hides a row from; it writes no row that
-- needs nothing.
CREATE FUNCTION mtdpp.map_roles() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    here bigint := mtdpp.cluster_id();
    models_ids integer[];
    readers_ids pg_catalog.tid[];
    models_mapped integer := 0;
    readers_mapped integer := 0;
BEGIN
    -- the triggers do the mapping: none while they are disabled (the
    -- ALTER TABLE ... DISABLE TRIGGER ALL before a restore's data)
    IF EXISTS (SELECT FROM pg_catalog.pg_trigger t
               WHERE t.tgrelid OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp.models'::pg_catalog.regclass,
                     'mtdpp.model_readers'::pg_catalog.regclass]::pg_catalog.oid[])
                 AND t.tgname OPERATOR(pg_catalog.=) ANY (ARRAY['models_by_role', 'readers_by_role']::pg_catalog.name[])
                 AND t.tgenabled OPERATOR(pg_catalog.=) 'D') THEN
        RETURN 0;
    END IF;
    -- the rows to map first: a statement that changes none fires the
    -- tables' statement triggers all the same, and an UPDATE of
    -- mtdpp.model_readers, which has no replica identity, fails where a
    -- publication publishes its updates
    SELECT pg_catalog.array_agg(m.model_id) INTO models_ids FROM mtdpp.models m
    WHERE CASE WHEN m.role_cluster OPERATOR(pg_catalog.=) here AND m.trained_by_oid IS NOT NULL
               THEN EXISTS (SELECT FROM pg_catalog.pg_roles r
                            WHERE r.oid OPERATOR(pg_catalog.=) m.trained_by_oid
                              AND r.rolname OPERATOR(pg_catalog.<>) m.trained_by)
               ELSE EXISTS (SELECT FROM pg_catalog.pg_roles r
                            WHERE r.rolname OPERATOR(pg_catalog.=) m.trained_by) END;
    IF models_ids IS NOT NULL THEN
        UPDATE mtdpp.models m SET role_cluster = m.role_cluster
        WHERE m.model_id OPERATOR(pg_catalog.=) ANY (models_ids);
        GET DIAGNOSTICS models_mapped = ROW_COUNT;
    END IF;
    SELECT pg_catalog.array_agg(s.ctid) INTO readers_ids FROM mtdpp.model_readers s
    WHERE CASE WHEN s.role_cluster OPERATOR(pg_catalog.=) here AND s.trained_by_oid IS NOT NULL
               THEN EXISTS (SELECT FROM pg_catalog.pg_roles t
                            WHERE t.oid OPERATOR(pg_catalog.=) s.trained_by_oid
                              AND t.rolname OPERATOR(pg_catalog.<>) s.trained_by)
                    OR EXISTS (SELECT FROM pg_catalog.pg_roles r
                               WHERE r.oid OPERATOR(pg_catalog.=) s.reader_oid
                                 AND r.rolname IS DISTINCT FROM s.reader)
               ELSE EXISTS (SELECT FROM pg_catalog.pg_roles t
                            WHERE t.rolname OPERATOR(pg_catalog.=) s.trained_by)
                    AND (s.reader IS NULL
                         OR EXISTS (SELECT FROM pg_catalog.pg_roles r
                                    WHERE r.rolname OPERATOR(pg_catalog.=) s.reader)) END;
    IF readers_ids IS NOT NULL THEN
        BEGIN
            UPDATE mtdpp.model_readers s SET role_cluster = s.role_cluster
            WHERE s.ctid OPERATOR(pg_catalog.=) ANY (readers_ids);
            GET DIAGNOSTICS readers_mapped = ROW_COUNT;
        EXCEPTION
            WHEN unique_violation THEN
                -- two shares by hand of one model with one role, under its
                -- names of two times: both stay as they are, and share as before
                RAISE WARNING 'the shares of mtdpp.model_readers keep the names they have'
                    USING DETAIL = SQLERRM,
                          HINT = 'Delete one of the two rows that share one model with one role.';
            WHEN object_not_in_prerequisite_state THEN
                -- published updates: the shares stay their names' here
                RAISE WARNING 'the shares of mtdpp.model_readers keep the names they have'
                    USING DETAIL = SQLERRM,
                          HINT = 'A publication that publishes the updates of mtdpp.model_readers needs a replica identity on it: ALTER TABLE mtdpp.model_readers REPLICA IDENTITY FULL.';
        END;
    END IF;
    RETURN models_mapped OPERATOR(pg_catalog.+) readers_mapped;
END
$$;
REVOKE ALL ON FUNCTION mtdpp.map_roles() FROM PUBLIC;
COMMENT ON FUNCTION mtdpp.map_roles() IS
    'maps the rows of mtdpp.models and mtdpp.model_readers of another cluster to the OIDs of the roles of their names, and gives the rows of this cluster the names their roles have now; returns the number of rows changed';

CREATE FUNCTION mtdpp.roles_restored() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- by names that need no privilege on schema mtdpp: any role's ALTER
    -- TABLE of its own tables passes here
    IF EXISTS (SELECT FROM pg_catalog.pg_event_trigger_ddl_commands() d
               JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) d.objid
               WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                 AND c.relnamespace OPERATOR(pg_catalog.=) 'mtdpp'::pg_catalog.regnamespace
                 AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['models', 'model_readers']::pg_catalog.name[])) THEN
        PERFORM mtdpp.map_roles();
    END IF;
END
$$;
CREATE EVENT TRIGGER mtdpp_map_roles ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
    EXECUTE FUNCTION mtdpp.roles_restored();
