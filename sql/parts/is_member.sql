-- Whether the current role is the reader of a share or a member of it, as
-- GRANT reaches the members of a role: by the reader's OID where the share
-- is of this cluster (ROLE_CLUSTER), else by its name; false for a role
-- that no longer exists.
CREATE FUNCTION mtdpp.is_member(reader name, reader_oid oid, role_cluster bigint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN role_cluster OPERATOR(pg_catalog.=) mtdpp.cluster_id()
                THEN EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) reader_oid
                             AND pg_catalog.pg_has_role(r.oid, 'MEMBER'))
                ELSE reader OPERATOR(pg_catalog.=) CURRENT_USER
                     OR EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) reader
                                AND pg_catalog.pg_has_role(r.oid, 'MEMBER')) END
$$;
