/*
 * store/isolation.c
 *		Isolation of the models by role: its state, what it means for query
 *		time, and who holds a name.
 *
 * The state is a row in mtdpp.isolation (mtdpp_isolate), which the
 * policies of mtdpp.models and mtdpp.items read (sql/mtdpp.sql): they
 * always exist, so that every way a database is restored is isolated as
 * soon as that row is back.  Without the row, and without a policy of the
 * DBA's own on a table, they show every row; query time then reads models
 * as for a role that row-level security does not filter, and shares the
 * server's copies of them (mtdpp_rls_filters).
 *
 * While the models are isolated, every version of a name comes from one
 * role.  Whether another role holds a name, and a name's next version, are
 * decided as the tables' owner, whom no policy filters, under the name's
 * lock: the caller's policies hide the other roles' rows, and deciding from
 * what they show would let a role take a name another holds (a version
 * left free by mtdpp_prune, a rename).  It is read under the latest
 * snapshot, after the lock: a repeatable read transaction's own snapshot
 * may predate the commit of the role that held the lock before it.  A trigger refuses such a row
 * however it is written (a grantee's own INSERT or UPDATE too), with the
 * same error, which names no version.
 *
 * Whose a row is: the role of its OID where the row is of this cluster
 * (role_cluster, this cluster's system identifier), else the role of its
 * name (sql/parts/role_ids.sql); "another role" below means the same.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "rewrite/rowsecurity.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "shown.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_models_name_check);
PG_FUNCTION_INFO_V1(mtdpp_cluster_id);

/*
 * This cluster's system identifier, as bigint (the same bits): the marker
 * of the rows whose role OIDs are this cluster's.  A physical standby has
 * its primary's; pg_upgrade and initdb make a new one.
 */
Datum
mtdpp_cluster_id(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) GetSystemIdentifier());
}

/* Whether the model tables record their roles' OIDs (0.6.0 on). */
static bool
role_ids_recorded(void)
{
	Oid			nsp = get_namespace_oid("mtdpp", true);
	Oid			models = OidIsValid(nsp) ? get_relname_relid("models", nsp) : InvalidOid;

	return OidIsValid(models) && get_attnum(models, "role_cluster") != InvalidAttrNumber;
}

/* Whether the models are isolated by role: a row in mtdpp.isolation, as the current snapshot sees it. */
bool
mtdpp_models_isolated(void)
{
	Oid			nsp = get_namespace_oid("mtdpp", true);
	Oid			relid = OidIsValid(nsp) ? get_relname_relid("isolation", nsp) : InvalidOid;
	Relation	rel;
	TableScanDesc scan;
	TupleTableSlot *slot;
	bool		found;

	if (!OidIsValid(relid))
		return false;			/* an extension older than 0.5.0 */
	rel = table_open(relid, AccessShareLock);
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot(),
						   0, NULL);
	found = table_scan_getnextslot(scan, ForwardScanDirection, slot);
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Whether row-level security may hide rows of REL from the current role:
 * it is enabled for the role, and either the models are isolated (ISOLATED)
 * or a policy other than mtdpp's own is on the table.
 */
bool
mtdpp_rls_filters(Oid relid, bool isolated)
{
	Relation	rel;
	bool		others = false;
	ListCell   *lc;

	if (check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED)
		return false;
	if (isolated)
		return true;
	rel = table_open(relid, AccessShareLock);
	if (rel->rd_rsdesc != NULL)
		foreach(lc, rel->rd_rsdesc->policies)
		{
			RowSecurityPolicy *p = (RowSecurityPolicy *) lfirst(lc);

			if (strcmp(p->policy_name, "mtdpp_own") != 0 && strcmp(p->policy_name, "mtdpp_shared") != 0)
				others = true;
		}
	table_close(rel, AccessShareLock);
	return others;
}

/* NAME is held by models of another role: said without a word about them */
void
mtdpp_name_not_available(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("model name \"%s\" is not available", mtdpp_shown(name)),
			 errhint("Another role may use this name; choose another one.")));
}

/*
 * One writer per model name at a time, until the transaction ends: the
 * advisory lock store.c takes too (the same key: text hashes the same in
 * every deterministic collation).
 */
static void
lock_name(const char *name)
{
	int32		space = DatumGetInt32(DirectFunctionCall1Coll(hashtext, DEFAULT_COLLATION_OID, CStringGetTextDatum("mtdpp.models")));
	int32		key = DatumGetInt32(DirectFunctionCall1Coll(hashtext, DEFAULT_COLLATION_OID, CStringGetTextDatum(name)));

	DirectFunctionCall2(pg_advisory_xact_lock_int4, Int32GetDatum(space), Int32GetDatum(key));
}

/* The owner of mtdpp.models, whom its policies do not filter. */
static Oid
models_owner(void)
{
	Oid			models = get_relname_relid("models", get_namespace_oid("mtdpp", false));
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(models));
	Oid			owner;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for relation %u", models);
	owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
	ReleaseSysCache(tp);
	return owner;
}

/*
 * Runs QUERY (a read of mtdpp.models, one row of int4 columns) through SPI,
 * connected, as the owner of mtdpp.models, whom its policies do not filter;
 * returns its first two columns in OUT.
 */
static void
read_as_owner(const char *query, int nargs, Oid *types, Datum *values, int32 out[2])
{
	Oid			owner = models_owner(),
				user;
	int			context;

	GetUserIdAndSecContext(&user, &context);
	SetUserIdAndSecContext(owner, context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		bool		isnull;

		SPIPlanPtr	plan = SPI_prepare(query, nargs, types);

		/*
		 * Under the latest snapshot, not the transaction's: a repeatable
		 * read transaction that waited for the name's lock would otherwise
		 * not see what the holder it waited for committed.
		 */
		if (plan == NULL ||
			SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(), InvalidSnapshot,
								 false, false, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "could not read mtdpp.models");
		for (int i = 0; i < 2; i++)
		{
			out[i] = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull));
			if (isnull)
				out[i] = 0;
		}
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(user, context);
	}
	PG_END_TRY();
}

/*
 * Maps the rows of the model tables that are of another cluster, or of a
 * role renamed since, to the roles of this one (mtdpp.map_roles), as the
 * tables' owner, inside an SPI connection: a training is one of the points
 * where a restored or upgraded database's rows become their roles' by OID.
 */
static void
map_roles_as_owner(void)
{
	Oid			owner = models_owner(),
				user;
	int			context;

	GetUserIdAndSecContext(&user, &context);
	SetUserIdAndSecContext(owner, context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		if (SPI_execute("SELECT mtdpp.map_roles()", false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not map the roles of mtdpp.models");
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(user, context);
	}
	PG_END_TRY();
}

/*
 * Deletes the items of the models whose model_ids the int4[] IDS holds,
 * just deleted by the caller (inside an SPI connection), as the tables'
 * owner, whom no policy hides an item from.  The trigger on mtdpp.models
 * has done it already on a single server; Citus fires it on the copies of
 * the table only (doc/scaling.md), where it leaves the items to this.
 */
void
mtdpp_delete_items_of(Datum ids)
{
	Oid			models = get_relname_relid("models", get_namespace_oid("mtdpp", false));
	Oid			owner = InvalidOid,
				user;
	int			context;
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(models));

	if (HeapTupleIsValid(tp))
	{
		owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
		ReleaseSysCache(tp);
	}
	if (!OidIsValid(owner))
		elog(ERROR, "cache lookup failed for relation %u", models);
	GetUserIdAndSecContext(&user, &context);
	SetUserIdAndSecContext(owner, context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		if (SPI_execute_with_args("DELETE FROM mtdpp.items WHERE model_id OPERATOR(pg_catalog.=) ANY ($1)",
								  1, (Oid[]) {INT4ARRAYOID}, &ids, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not delete from mtdpp.items");
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(user, context);
	}
	PG_END_TRY();
}

/*
 * The next version of NAME, for the current role, under the name's lock
 * (inside an SPI connection): one more than the highest of every role's.
 * While the models are isolated, fails as mtdpp_name_not_available when
 * another role holds models of NAME.
 */
int
mtdpp_name_next_version(const char *name)
{
	int32		row[2];
	bool		ids = role_ids_recorded();

	lock_name(name);
	if (ids)
		map_roles_as_owner();
	read_as_owner(ids ?
				  "SELECT pg_catalog.count(*) FILTER (WHERE (CASE WHEN m.role_cluster OPERATOR(pg_catalog.=) $3 "
				  "THEN m.trained_by_oid OPERATOR(pg_catalog.=) $4 ELSE m.trained_by OPERATOR(pg_catalog.=) $2 END) "
				  "IS NOT TRUE)::pg_catalog.int4, "
				  "pg_catalog.max(m.version) FROM mtdpp.models m WHERE m.name OPERATOR(pg_catalog.=) $1" :
				  "SELECT pg_catalog.count(*) FILTER (WHERE m.trained_by OPERATOR(pg_catalog.<>) $2)::pg_catalog.int4, "
				  "pg_catalog.max(m.version) FROM mtdpp.models m WHERE m.name OPERATOR(pg_catalog.=) $1",
				  ids ? 4 : 2, (Oid[]) {TEXTOID, NAMEOID, INT8OID, OIDOID},
				  (Datum[]) {CStringGetTextDatum(name),
					  DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false))),
					  Int64GetDatum((int64) GetSystemIdentifier()), ObjectIdGetDatum(GetUserId())}, row);
	if (row[0] > 0 && mtdpp_models_isolated())
		mtdpp_name_not_available(name);
	return row[1] + 1;
}

/*
 * Trigger BEFORE INSERT OR UPDATE on mtdpp.models, for each row: while the
 * models are isolated, a role that row-level security filters may not
 * write a row of a name that another role's models hold.  The tables'
 * owner, superusers and BYPASSRLS roles (restores) are not checked.
 */
Datum
mtdpp_models_name_check(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	HeapTuple	row;
	TupleDesc	desc;
	char	   *name,
			   *trained_by,
			   *model_id;
	int32		found[2];
	int			by_oid,
				cluster;
	bool		ids = false;
	Oid			role = InvalidOid;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_BEFORE(td->tg_event))
		elog(ERROR, "mtdpp_models_name_check must be called as a row trigger before the write");
	row = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	desc = RelationGetDescr(td->tg_relation);
	if (check_enable_rls(RelationGetRelid(td->tg_relation), InvalidOid, true) != RLS_ENABLED)
		return PointerGetDatum(row);
	name = SPI_getvalue(row, desc, SPI_fnumber(desc, "name"));
	trained_by = SPI_getvalue(row, desc, SPI_fnumber(desc, "trained_by"));
	model_id = SPI_getvalue(row, desc, SPI_fnumber(desc, "model_id"));
	if (name == NULL || trained_by == NULL || model_id == NULL)
		return PointerGetDatum(row);	/* the table's own constraints refuse it */
	by_oid = SPI_fnumber(desc, "trained_by_oid");
	cluster = SPI_fnumber(desc, "role_cluster");
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		bool		same = true;

		/* the same name and the same role: nothing to check */
		for (int i = 0; i < 4 && same; i++)
		{
			int			col = i == 0 ? SPI_fnumber(desc, "name") :
				i == 1 ? SPI_fnumber(desc, "trained_by") : i == 2 ? by_oid : cluster;
			char	   *was,
					   *is;

			if (col <= 0)
				continue;
			was = SPI_getvalue(td->tg_trigtuple, desc, col);
			is = SPI_getvalue(row, desc, col);
			same = (was == NULL) == (is == NULL) && (was == NULL || strcmp(was, is) == 0);
		}
		if (same)
			return PointerGetDatum(row);
	}
	if (!mtdpp_models_isolated())
		return PointerGetDatum(row);
	/* the row's role by its OID where the row is this cluster's, else by its name */
	if (by_oid > 0 && cluster > 0)
	{
		bool		null_cluster,
					null_oid;
		Datum		c = SPI_getbinval(row, desc, cluster, &null_cluster);
		Datum		o = SPI_getbinval(row, desc, by_oid, &null_oid);

		ids = true;
		if (!null_cluster && !null_oid && DatumGetInt64(c) == (int64) GetSystemIdentifier())
			role = DatumGetObjectId(o);
	}
	lock_name(name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	read_as_owner(ids ?
				  "SELECT pg_catalog.count(*)::pg_catalog.int4, 0 FROM mtdpp.models m "
				  "WHERE m.name OPERATOR(pg_catalog.=) $1 AND (CASE WHEN m.role_cluster OPERATOR(pg_catalog.=) $4 "
				  "AND $5 OPERATOR(pg_catalog.<>) 0::pg_catalog.oid THEN m.trained_by_oid OPERATOR(pg_catalog.=) $5 "
				  "ELSE m.trained_by OPERATOR(pg_catalog.=) $2 END) IS NOT TRUE "
				  "AND m.model_id OPERATOR(pg_catalog.<>) $3" :
				  "SELECT pg_catalog.count(*)::pg_catalog.int4, 0 FROM mtdpp.models m "
				  "WHERE m.name OPERATOR(pg_catalog.=) $1 AND m.trained_by OPERATOR(pg_catalog.<>) $2 "
				  "AND m.model_id OPERATOR(pg_catalog.<>) $3",
				  ids ? 5 : 3, (Oid[]) {TEXTOID, NAMEOID, INT4OID, INT8OID, OIDOID},
				  (Datum[]) {CStringGetTextDatum(name), DirectFunctionCall1(namein, CStringGetDatum(trained_by)),
					  Int32GetDatum(pg_strtoint32(model_id)), Int64GetDatum((int64) GetSystemIdentifier()),
				  ObjectIdGetDatum(role)}, found);
	SPI_finish();
	if (found[0] > 0)
		mtdpp_name_not_available(name);
	return PointerGetDatum(row);
}
