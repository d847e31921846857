/*
 * store/cache.c
 *		Reading models for query time: the per-backend model cache.
 *
 * Query time reads a model from the tables once per backend and keeps it,
 * laid out for the scorer (factors in single precision, R squared in panels
 * of MTDPP_PANEL items), in a memory context of its own.  Statement triggers
 * on both model tables register a relcache invalidation of mtdpp.models,
 * which PostgreSQL sends to every backend at commit (and replays locally at
 * the next command, or on abort); the callback below bumps a generation
 * counter, and the next lookup reads the model again.  Every lookup takes in
 * the invalidations other sessions sent and checks the current role's
 * privileges first, so a change or a REVOKE shows from the very next
 * statement, in every session, and no statement pays a catalog round trip
 * while nothing changes.  An entry read under a snapshot older than the
 * latest commits answers only that transaction or statement.  A lookup pins
 * the entry for the caller's memory context, so a model in use is never
 * freed under its user.  With mtdpp preloaded, an entry's model is the
 * server's one shared copy of the rows it was read from (shared_models.c), unless
 * row-level security applies: the entries, their invalidation, pins and
 * privilege checks stay this backend's.
 *
 * Row-level security needs more than the invalidations: a policy may read a
 * setting, a table of grants or role memberships, none of which touches the
 * model tables.  An entry read under row security therefore answers a
 * statement only after a query run now, under the caller's policies, still
 * sees its model's row and every item row it holds (rls_still_visible);
 * roles that row security does not filter pay nothing for it.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"
#include "pg_compat.h"
#include "shown.h"
#include "storage/proc.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_models_changed);

/*
 * One cached model.  Each lives in a memory context of its own, so that it
 * can be freed alone.  PINS counts the calls that use it (see
 * mtdpp_lookup_model); an entry taken out of the list while pinned is freed
 * by its last unpin, so a model stays valid for as long as a call uses it,
 * whatever the calls nested inside that one do to the cache.
 */
typedef struct CachedModel
{
	struct CachedModel *next;
	MemoryContext context;		/* holds the entry and its model */
	char	   *name;			/* NULL: the default model */
	char	   *model_name;		/* the name of the model that answers */
	int			model_id;
	MtdppModel *model;
	MtdppItemKeys *keys;		/* NULL: its items are integers */
	uint64		generation;		/* models_generation before it was read */
	LocalTransactionId lxid;	/* if valid: only for this transaction, */
	TimestampTz statement;		/* and if not 0, this statement */
	Oid			row_security_user;	/* read under row security as this role */
	TransactionId xmin;			/* of the model's row of mtdpp.models */
	LocalTransactionId seen_lxid;	/* row security: seen in this */
	MemoryContext seen_context; /* statement (see statement_context) */
	uint64		seen_serial;
	int			pins;
	bool		listed;			/* in the list, to be found by lookups */
} CachedModel;

static MemoryContext cache_context = NULL;
static CachedModel *cache_head = NULL;
static uint64 models_generation = 1;	/* bumped by every invalidation */
static Oid	models_relid = InvalidOid;

static void
relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == models_relid)
		models_generation++;
}

/* mtdpp.model: the model a call that names none answers with ('': see below) */
static char *model_setting = NULL;

void
mtdpp_cache_init(void)
{
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
	DefineCustomStringVariable("mtdpp.model",
							   "The model that answers a call naming none.",
							   "Empty: the one model name with an active version, if there is only one.",
							   &model_setting, "", PGC_USERSET, 0, NULL, NULL, NULL);
}

/* The OIDs of schema mtdpp and of its two model tables. */
static void
model_tables(Oid *nsp, Oid *models, Oid *items)
{
	*nsp = get_namespace_oid("mtdpp", true);
	*models = OidIsValid(*nsp) ? get_relname_relid("models", *nsp) : InvalidOid;
	*items = OidIsValid(*nsp) ? get_relname_relid("items", *nsp) : InvalidOid;
	if (!OidIsValid(*models) || !OidIsValid(*items))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the model tables mtdpp.models and mtdpp.items do not exist"),
				 errhint("Run CREATE EXTENSION mtdpp in this database.")));
}

/*
 * Trigger on the model tables: every backend drops its cache.  Statement
 * triggers serve ordinary sessions; row triggers, enabled for replicas
 * only, logical replication's apply worker, where one invalidation per
 * (sub)transaction is enough (it sends them at commit, and nothing in that
 * process completes baskets), rather than one per applied row.
 */
Datum
mtdpp_models_changed(PG_FUNCTION_ARGS)
{
	static LocalTransactionId row_lxid = InvalidLocalTransactionId;
	static SubTransactionId row_subxid = InvalidSubTransactionId;
	Oid			nsp,
				models,
				items;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "mtdpp_models_changed must be called as a trigger");
	if (TRIGGER_FIRED_FOR_ROW(((TriggerData *) fcinfo->context)->tg_event))
	{
		if (row_lxid == MTDPP_MY_LXID && row_subxid == GetCurrentSubTransactionId())
			return PointerGetDatum(NULL);
		row_lxid = MTDPP_MY_LXID;
		row_subxid = GetCurrentSubTransactionId();
	}
	model_tables(&nsp, &models, &items);
	CacheInvalidateRelcacheByRelid(models);
	return PointerGetDatum(NULL);
}

/*
 * The error of a call that names no model while mtdpp.model is empty and
 * not exactly one model name has an active version (SPI connected).
 */
static void
no_default_model(void)
{
	uint64		n;
	char	   *names;
	bool		isnull;

	if (SPI_execute("SELECT pg_catalog.count(*), pg_catalog.string_agg(pg_catalog.quote_literal(name), ', ' "
					"ORDER BY name) FILTER (WHERE n OPERATOR(pg_catalog.<=) 10) "
					"FROM (SELECT name, pg_catalog.row_number() OVER (ORDER BY name) AS n "
					"      FROM mtdpp.models WHERE active) a",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read mtdpp.models");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("there is no active mtdpp model"),
				 errhint("Train one with mtdpp_train, or activate one with mtdpp_activate.")));
	names = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("no model is named, and mtdpp.model is not set: " UINT64_FORMAT " models could answer", n),
			 errhint("Name the model in the call, or set mtdpp.model to one of %s%s: SET for this session, ALTER ROLE ... SET or ALTER DATABASE ... SET for every session.",
					 names, n > 10 ? ", ..." : "")));
}

/*
 * Runs the query for the row of mtdpp.models that answers for NAME (NULL:
 * the default model); true if there is one, as SPI's first result row.
 */
static bool
find_active_model(const char *name)
{
	int			ret;

	/*
	 * No model named and mtdpp.model empty: the only active one, if it is;
	 * in a database whose extension is not yet updated to 0.5.0, the most
	 * recently activated, as before, until the update sets mtdpp.model.
	 */
	if (name == NULL && !mtdpp_has_relation("isolation"))
		ret = SPI_execute("SELECT model_id, kind, rank, n_items, n_baskets, log_w, xmin, name FROM mtdpp.models "
						  "WHERE active ORDER BY activated_at DESC NULLS LAST, model_id DESC LIMIT 1",
						  true, 1);
	else if (name == NULL)
		ret = SPI_execute("SELECT model_id, kind, rank, n_items, n_baskets, log_w, xmin, name FROM mtdpp.models "
						  "WHERE active AND (SELECT pg_catalog.count(*) FROM mtdpp.models a WHERE a.active) "
						  "OPERATOR(pg_catalog.=) 1",
						  true, 1);
	else
		ret = SPI_execute_with_args("SELECT model_id, kind, rank, n_items, n_baskets, log_w, xmin, name "
									"FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1 AND active",
									1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
									NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	return SPI_processed > 0;
}

static int
first_int(int col)
{
	bool		isnull;

	return DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull));
}

/*
 * The key of the rows of model MODEL_ID (its row of mtdpp.models has XMIN)
 * as the current snapshot sees them, its versions allocated in CONTEXT; false
 * if they cannot be shared: rows this transaction wrote, or a row count
 * that is not the model's (the read will say what is wrong).
 */
static bool
model_key(MtdppSharedKey *key, int model_id, TransactionId xmin, int rank, int n_items,
		  MemoryContext context)
{
	if (TransactionIdIsCurrentTransactionId(xmin))
		return false;
	if (SPI_execute_with_args("SELECT item_id, xmin FROM mtdpp.items "
							  "WHERE model_id OPERATOR(pg_catalog.=) $1 ORDER BY item_id",
							  1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the items of model %d", model_id);
	if (SPI_processed != (uint64) n_items || n_items < 1)
		return false;
	key->db = MyDatabaseId;
	key->model_id = model_id;
	key->xmin = xmin;
	key->n_items = n_items;
	key->rank = rank;
	key->versions = MemoryContextAllocHuge(context, mul_size(sizeof(MtdppItemVersion), n_items));
	for (int i = 0; i < n_items; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;

		key->versions[i].item_id = DatumGetInt32(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		key->versions[i].xmin = DatumGetTransactionId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
		if (TransactionIdIsCurrentTransactionId(key->versions[i].xmin))
		{
			pfree(key->versions);
			return false;
		}
	}
	mtdpp_shared_key_hash(key);
	return true;
}

/*
 * Refuses a lookup of NAME that found no active model: no default, a name
 * without an active version, a name mtdpp.model gives that does not exist,
 * or an unknown name.
 */
static void
no_active_model(const char *name, bool from_setting)
{
	if (name == NULL)
		no_default_model();
	if (SPI_execute_with_args("SELECT 1 FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1", 1,
							  (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, true, 1) == SPI_OK_SELECT && SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" has no active version", name),
				 errhint("Activate one with mtdpp_activate('%s').", name)));
	if (from_setting)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%s\" does not exist", mtdpp_shown(name)),
				 errdetail("mtdpp.model names it, for a call that names no model."),
				 errhint("SHOW mtdpp.model says where it is set; SELECT name FROM mtdpp_models lists the models.")));
	mtdpp_unknown_model(name);
}

/*
 * The snapshot entry C was read with may be older than the latest commits
 * (a repeatable read transaction, or a commit that landed while this
 * statement ran, whose invalidation came before the read).  If a statement
 * starting now would pick another model for NAME, C answers only for this
 * transaction (repeatable read) or this statement (read committed).
 * Parallel mode cannot take a new snapshot: a parallel query's entries live
 * no longer than the query in a worker, and the leader relies on the
 * invalidation alone.
 */
static void
limit_to_snapshot(CachedModel *c, const char *name)
{
	bool		same;

	if (IsInParallelMode())
		return;
	PushActiveSnapshot(GetLatestSnapshot());
	same = find_active_model(name) && first_int(1) == c->model_id;
	PopActiveSnapshot();
	if (!same)
	{
		c->lxid = MTDPP_MY_LXID;
		c->statement = IsolationUsesXactSnapshot() ? 0 : GetCurrentStatementStartTimestamp();
	}
}

/*
 * Reads the model answering for NAME, as the current snapshot sees the
 * tables, into a new entry (not yet listed).  The entry's memory hangs
 * under the caller's context until the entry is complete, so an error while
 * reading frees it.  If SHAREABLE, the model comes from, or goes to, the
 * server's shared copy of the same rows (shared_models.c).
 */
static CachedModel *
read_entry(const char *name, bool from_setting, Oid row_security_user, bool shareable)
{
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "mtdpp cached model",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext own = context;
	CachedModel *c = MemoryContextAllocZero(context, sizeof(CachedModel));
	MtdppSharedKey key = {0};
	MtdppSharedClaim *claim = NULL;
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	td;
	char	   *kind,
			   *model_name;
	int			rank,
				n_items,
				n_baskets;
	double		log_w;
	TransactionId xmin;
	int			nest;

	c->context = context;
	c->name = name ? MemoryContextStrdup(context, name) : NULL;
	/* an invalidation that arrives while it is read makes it stale at once */
	c->generation = models_generation;
	c->row_security_user = row_security_user;

	nest = mtdpp_model_tables_connect();
	if (!find_active_model(name))
		no_active_model(name, from_setting);
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	c->model_id = first_int(1);
	kind = TextDatumGetCString(SPI_getbinval(tup, td, 2, &isnull));
	model_name = TextDatumGetCString(SPI_getbinval(tup, td, 8, &isnull));
	c->model_name = MemoryContextStrdup(context, model_name);
	rank = first_int(3);
	n_items = first_int(4);
	n_baskets = first_int(5);
	log_w = DatumGetFloat8(SPI_getbinval(tup, td, 6, &isnull));
	xmin = DatumGetTransactionId(SPI_getbinval(tup, td, 7, &isnull));
	if (shareable && model_key(&key, c->model_id, xmin, rank, n_items, context))
		c->model = mtdpp_shared_get(&key, context, &claim);
	if (c->model == NULL)
	{
		/* read into a context of its own if it is to be copied and freed */
		if (claim != NULL)
			own = AllocSetContextCreate(context, "mtdpp model read to share",
										ALLOCSET_DEFAULT_SIZES);
		c->model = mtdpp_read_model_rows(own, c->model_id, model_name, kind, rank, n_items, n_baskets, log_w,
							  OidIsValid(row_security_user));
	}
	c->xmin = xmin;
	/* the keys of its items, this backend's even for a shared copy */
	if (get_attnum(models_relid, "item_type") != InvalidAttrNumber)
		c->keys = mtdpp_read_item_keys(context, c->model_id);
	limit_to_snapshot(c, name);
	mtdpp_model_tables_done(nest);
	if (claim != NULL)
	{
		MtdppModel *shared = mtdpp_shared_put(claim, c->model);

		if (shared != NULL)
		{
			MemoryContextDelete(own);
			c->model = shared;
		}
	}
	if (key.versions != NULL)
		pfree(key.versions);
	return c;
}

/* Whether entry C may answer a lookup now. */
static bool
entry_current(const CachedModel *c)
{
	if (c->generation != models_generation)
		return false;
	if (c->lxid != InvalidLocalTransactionId &&
		(c->lxid != MTDPP_MY_LXID ||
		 (c->statement != 0 && c->statement != GetCurrentStatementStartTimestamp())))
		return false;
	return true;
}

static void
entry_unpin(void *arg)
{
	CachedModel *c = (CachedModel *) arg;

	if (--c->pins == 0 && !c->listed)
		MemoryContextDelete(c->context);
}

/* Pins C until the caller's memory context is reset or deleted. */
static MtdppModel *
entry_pin(CachedModel *c, int *model_id, const char **model_name)
{
	MemoryContextCallback *cb = palloc(sizeof(MemoryContextCallback));

	cb->func = entry_unpin;
	cb->arg = c;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	c->pins++;
	if (model_id)
		*model_id = c->model_id;
	if (model_name)
		*model_name = c->model_name;
	return c->model;
}

/*
 * Statements, as row-level security needs to tell them apart.  A top-level
 * statement runs in a portal of its own, even one of several sent in one
 * query string (which share a statement timestamp and a transaction), and
 * the portal's memory context goes when the statement ends; a parallel
 * worker lives for one query.  So an entry seen in the context that
 * statement_context names is seen for the statement until a context marked
 * here is reset or deleted, which moves statement_serial on (and
 * invalidates every entry seen before: a nested portal that ends makes the
 * next lookup query again, which is never wrong).  Without such a context,
 * every lookup queries.
 */
typedef struct StatementMark
{
	MemoryContextCallback callback;
	MemoryContext context;
	struct StatementMark *next;
} StatementMark;

static StatementMark *statement_marks = NULL;
static uint64 statement_serial = 1;

static void
statement_ended(void *arg)
{
	StatementMark *mark = (StatementMark *) arg;

	for (StatementMark **link = &statement_marks; *link != NULL; link = &(*link)->next)
		if (*link == mark)
		{
			*link = mark->next;
			break;
		}
	statement_serial++;
}

static MemoryContext
statement_context(void)
{
	return IsParallelWorker() ? TopTransactionContext : PortalContext;
}

/* Whether row security let C answer in this statement already. */
static bool
seen_in_statement(const CachedModel *c)
{
	return c->seen_context != NULL && c->seen_context == statement_context() &&
		c->seen_serial == statement_serial && c->seen_lxid == MTDPP_MY_LXID;
}

/*
 * The current statement's context, with a mark on it that ends the
 * statement's serial number when it goes; NULL outside a statement.
 */
static MemoryContext
marked_statement(void)
{
	MemoryContext context = statement_context();
	StatementMark *mark;

	if (context == NULL)
		return NULL;
	for (mark = statement_marks; mark != NULL; mark = mark->next)
		if (mark->context == context)
			break;
	if (mark == NULL)
	{
		mark = MemoryContextAllocZero(context, sizeof(StatementMark));
		mark->context = context;
		mark->callback.func = statement_ended;
		mark->callback.arg = mark;
		MemoryContextRegisterResetCallback(context, &mark->callback);
		mark->next = statement_marks;
		statement_marks = mark;
	}
	return context;
}

/* C's rows were visible to the current role in this statement. */
static void
mark_seen(CachedModel *c)
{
	c->seen_context = marked_statement();
	c->seen_serial = statement_serial;
	c->seen_lxid = MTDPP_MY_LXID;
}

/*
 * True the first time ONCE is asked in a statement (each statement of a
 * query string counts), false after: for what a statement is to hear once,
 * not once per row.
 */
bool
mtdpp_first_in_statement(MtdppStatementOnce *once)
{
	MemoryContext context = marked_statement();

	if (context != NULL && once->context == context && once->serial == statement_serial &&
		once->lxid == MTDPP_MY_LXID)
		return false;
	once->context = context;
	once->serial = statement_serial;
	once->lxid = MTDPP_MY_LXID;
	return true;
}

/*
 * Whether a SELECT run now, under the current role's policies, sees what
 * entry C was read from: the same row of mtdpp.models answering for its
 * name, and every item row it holds (their number: since C was read no
 * row of the model tables changed, or C would not be current, and it was
 * read from exactly its model's rows, so as many visible rows are all of
 * them).  A query on
 * each table that row security filters for the current role (MODELS_RLS,
 * ITEMS_RLS): the other shows all of its rows.
 */
static bool
rls_still_visible(const CachedModel *c, bool models_rls, bool items_rls)
{
	bool		visible;
	bool		isnull;
	int			nest = NewGUCNestLevel();

	/*
	 * The planner's cost for a policy evaluated on many item rows can pass
	 * jit_above_cost, and compiling then takes longer than the scan.
	 */
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) mtdpp_model_tables_connect();
	visible = !models_rls ||
		(find_active_model(c->name) && first_int(1) == c->model_id &&
		 DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											 7, &isnull)) == c->xmin);
	if (visible && items_rls)
	{
		if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM mtdpp.items "
								  "WHERE model_id OPERATOR(pg_catalog.=) $1",
								  1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(c->model_id)},
								  NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not read the items of model %d", c->model_id);
		visible = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											  1, &isnull)) == c->model->n_items;
	}
	SPI_finish();
	AtEOXact_GUC(true, nest);
	return visible;
}

/*
 * The current role may read the model tables, as a SELECT on them would
 * check: USAGE on schema mtdpp, SELECT on both tables (or on all their
 * columns).  A few syscache lookups, done on every call, cached model or not.
 */
static void
check_model_privileges(Oid nsp, Oid models, Oid items)
{
	Oid			user = GetUserId();
	AclResult	r = mtdpp_namespace_aclcheck(nsp, user, ACL_USAGE);

	if (r != ACLCHECK_OK)
		aclcheck_error(r, OBJECT_SCHEMA, "mtdpp");
	for (int t = 0; t < 2; t++)
	{
		Oid			rel = t == 0 ? models : items;

		if (pg_class_aclcheck(rel, user, ACL_SELECT) != ACLCHECK_OK &&
			pg_attribute_aclcheck_all(rel, user, ACL_SELECT, ACLMASK_ALL) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(rel));
	}
}

/*
 * The active model of NAME, or the default model when NAME is NULL, as the
 * current snapshot sees the model tables: from the cache, or read from the
 * tables into it.  The model is pinned, and so stays valid, until the
 * caller's current memory context is reset or deleted (at the latest, the
 * end of the call's query or an error).
 *
 * Every call first takes in the invalidations other sessions have sent
 * (so a change committed elsewhere shows from this statement on, even
 * inside a transaction block), then checks the current role's privileges.
 * Under row-level security on the model tables an entry answers only the
 * role that read it, and only in a statement whose policies still show it
 * all of the entry's rows (checked once per statement).
 */
MtdppModel *
mtdpp_lookup_model(const char *name, int *model_id, const char **model_name)
{
	Oid			nsp,
				items;
	Oid			row_security_user = InvalidOid;
	bool		isolated,
				models_rls,
				items_rls;
	bool		shareable;
	CachedModel *c,
			  **link;
	bool		from_setting = name == NULL && model_setting != NULL && model_setting[0] != '\0';

	if (from_setting)
		name = model_setting;
	AcceptInvalidationMessages();
	model_tables(&nsp, &models_relid, &items);
	check_model_privileges(nsp, models_relid, items);
	/* mtdpp's own policies filter nothing while the models are not isolated */
	isolated = (check_enable_rls(models_relid, InvalidOid, true) == RLS_ENABLED ||
				check_enable_rls(items, InvalidOid, true) == RLS_ENABLED) && mtdpp_models_isolated();
	models_rls = mtdpp_rls_filters(models_relid, isolated);
	items_rls = mtdpp_rls_filters(items, isolated);
	if (models_rls || items_rls)
		row_security_user = GetUserId();

	/*
	 * The server's shared copy serves roles that read whole rows of the
	 * model tables, rows that row-level security does not filter (the
	 * privilege check above holds on every call, shared copy or not).
	 */
	shareable = mtdpp_shared_enabled() && !OidIsValid(row_security_user) &&
		pg_class_aclcheck(models_relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK &&
		pg_class_aclcheck(items, GetUserId(), ACL_SELECT) == ACLCHECK_OK;

	if (cache_context == NULL)
		cache_context = AllocSetContextCreate(TopMemoryContext, "mtdpp model cache",
											  ALLOCSET_SMALL_SIZES);
	for (link = &cache_head; (c = *link) != NULL;)
	{
		if (!entry_current(c))
		{
			/* out of the list; freed now, or by its last unpin */
			*link = c->next;
			c->listed = false;
			if (c->pins == 0)
				MemoryContextDelete(c->context);
			continue;
		}
		if (((name == NULL && c->name == NULL) ||
			 (name != NULL && c->name != NULL && strcmp(name, c->name) == 0)) &&
			c->row_security_user == row_security_user)
		{
			if (!OidIsValid(row_security_user) || seen_in_statement(c))
				return entry_pin(c, model_id, model_name);
			if (rls_still_visible(c, models_rls, items_rls))
			{
				mark_seen(c);
				return entry_pin(c, model_id, model_name);
			}
			/* the policies show other rows now: read what they show */
			*link = c->next;
			c->listed = false;
			if (c->pins == 0)
				MemoryContextDelete(c->context);
			break;
		}
		link = &c->next;
	}

	c = read_entry(name, from_setting, row_security_user, shareable);
	MemoryContextSetParent(c->context, cache_context);
	c->listed = true;
	c->next = cache_head;
	cache_head = c;
	if (OidIsValid(row_security_user))
		mark_seen(c);
	return entry_pin(c, model_id, model_name);
}

/*
 * The keys of model M's items, NULL if they are integers.  M is a model the
 * caller's lookup pinned, so its entry is still in the cache or pinned.
 */
const MtdppItemKeys *
mtdpp_model_keys(const MtdppModel *m)
{
	for (CachedModel *c = cache_head; c != NULL; c = c->next)
		if (c->model == m)
			return c->keys;
	return NULL;
}
