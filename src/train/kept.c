/*
 * train/kept.c
 *		The held-out baskets a version keeps, by their keys, and any version
 *		of the name measured on them.
 *
 * A training that holds out test baskets keeps them with its version
 * (mtdpp.models.test_baskets), so that mtdpp_activate under a promotion
 * rule can later compare that version with the active one on the same
 * baskets, long after the source has changed.  They are kept by their item
 * keys, as text, not by item numbers: each version numbers its items
 * itself, and a key any version does not know is ranked as
 * mtdpp_evaluate ranks an unknown item.  Each basket is a JSON array of
 * its keys, the held-out item first.
 *
 * What is kept is bounded, so that a version's row stays small beside its
 * items: at most KEPT_BASKETS baskets and KEPT_BYTES of their JSON text,
 * taken in the order of a hash of the basket with the training's seed (the
 * same baskets on every run, none favoured by its size or its keys); the
 * test's figures count every held-out basket, and its "kept" says how many
 * were kept.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "utils/jsonb.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "query/arguments.h"
#include "store/store.h"
#include "train/train.h"

#define KEPT_BASKETS	10000
#define KEPT_BYTES		(4 * 1024 * 1024)

/*
 * Keeps the baskets H held out with version MODEL_ID (inside an SPI
 * connection); returns how many.
 */
int64
mtdpp_kept_store(const HeldOut *h, int model_id)
{
	char	   *sql;
	bool		isnull;
	Datum		baskets;
	int64		n;

	/*
	 * Chosen by a SELECT, then stored by an UPDATE of one value, as the
	 * other columns of a version are: Citus, whose reference tables the
	 * model tables may be, refuses an UPDATE of them that reads the source.
	 */
	sql = psprintf("SELECT pg_catalog.jsonb_agg(t.b ORDER BY t.o, t.s), pg_catalog.count(*) FROM ("
				   "SELECT x.b, x.o, x.s, pg_catalog.row_number() OVER w AS r, "
				   "pg_catalog.sum(pg_catalog.octet_length(x.s)) OVER w AS bytes FROM ("
				   "SELECT j.b, j.b::pg_catalog.text AS s, "
				   "pg_catalog.hashtextextended(j.b::pg_catalog.text, " INT64_FORMAT "::pg_catalog.int8) AS o FROM ("
				   "SELECT pg_catalog.to_jsonb(pg_catalog.array_prepend(q.held::pg_catalog.text, "
				   "pg_catalog.array_remove(q.basket::pg_catalog.text[], q.held::pg_catalog.text))) AS b "
				   "FROM (%s) q) j) x WINDOW w AS (ORDER BY x.o, x.s ROWS UNBOUNDED PRECEDING)) t "
				   "WHERE t.r OPERATOR(pg_catalog.<=) %d AND t.bytes OPERATOR(pg_catalog.<=) %d",
				   h->seed, h->test_query, KEPT_BASKETS, KEPT_BYTES);
	if (SPI_execute_with_args(sql, 1, (Oid[]) {INT8ARRAYOID}, (Datum[]) {h->orders},
							  (char[]) {h->orders ? ' ' : 'n'}, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not choose the held-out baskets of model %d to keep", model_id);
	baskets = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (n == 0)
		return 0;
	if (SPI_execute_with_args("UPDATE mtdpp.models SET test_baskets = $2 WHERE model_id OPERATOR(pg_catalog.=) $1",
							  2, (Oid[]) {INT4OID, JSONBOID}, (Datum[]) {Int32GetDatum(model_id), baskets},
							  NULL, false, 0) != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not keep the held-out baskets of model %d", model_id);
	return n;
}

/* model MODEL_ID read from the tables, as the caller sees them; its keys into *KEYS */
static MtdppModel *
read_version(int model_id, MtdppItemKeys **keys)
{
	Oid			nsp = get_namespace_oid("mtdpp", false);
	bool		rls = mtdpp_rls_filters(get_relname_relid("items", nsp), mtdpp_models_isolated());
	HeapTuple	tup;
	TupleDesc	td;
	bool		isnull;
	MemoryContext caller = CurrentMemoryContext;
	char	   *kind,
			   *name;
	int			rank,
				n_items,
				n_baskets;
	double		log_w;
	MtdppModel *m;

	if (SPI_execute_with_args("SELECT kind, rank, n_items, n_baskets, log_w, name FROM mtdpp.models "
							  "WHERE model_id OPERATOR(pg_catalog.=) $1", 1,
							  (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
							  NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read model %d", model_id);
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	MemoryContextSwitchTo(caller);
	kind = TextDatumGetCString(SPI_getbinval(tup, td, 1, &isnull));
	rank = DatumGetInt32(SPI_getbinval(tup, td, 2, &isnull));
	n_items = DatumGetInt32(SPI_getbinval(tup, td, 3, &isnull));
	n_baskets = DatumGetInt32(SPI_getbinval(tup, td, 4, &isnull));
	log_w = DatumGetFloat8(SPI_getbinval(tup, td, 5, &isnull));
	name = TextDatumGetCString(SPI_getbinval(tup, td, 6, &isnull));
	m = mtdpp_read_model_rows(caller, model_id, name, kind, rank, n_items, n_baskets, log_w, rls);
	*keys = mtdpp_read_item_keys(caller, model_id);
	MemoryContextSwitchTo(caller);
	return m;
}

/*
 * The figure METRIC (mpr, or precision_at_K, recall_at_K, ndcg_at_K) of
 * model MODEL_ID on the baskets version KEPT_ID kept; the baskets counted
 * into *BASKETS.  Reads as the calling role.
 */
double
mtdpp_kept_figure(int kept_id, int model_id, const char *metric, int64 *baskets)
{
	MtdppTestFigures f = {0};
	MtdppItemKeys *keys;
	MtdppModel *m;
	int			nest;
	int			k = 1;
	const char *type;
	char	   *query;
	double		value = 0.0;

	if (strcmp(metric, "mpr") != 0)
		k = atoi(strrchr(metric, '_') + 1);
	nest = mtdpp_model_tables_connect();
	m = read_version(model_id, &keys);
	type = keys == NULL ? "int4" : keys->type == INT8OID ? "int8" : keys->type == UUIDOID ? "uuid" : "text";
	query = psprintf("SELECT ARRAY(SELECT e::pg_catalog.%s FROM pg_catalog.jsonb_array_elements_text(b.value) e), "
					 "(b.value OPERATOR(pg_catalog.->>) 0)::pg_catalog.%s "
					 "FROM mtdpp.models m CROSS JOIN LATERAL pg_catalog.jsonb_array_elements(m.test_baskets) b "
					 "WHERE m.model_id OPERATOR(pg_catalog.=) $1",
					 type, type);
	f.nk = 1;
	f.k = &k;
	f.precision = palloc0(sizeof(double));
	f.recall = palloc0(sizeof(double));
	f.ndcg = palloc0(sizeof(double));
	mtdpp_evaluate_baskets(m, keys, query, 1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(kept_id)}, &f);
	/* read before the connection ends: the model and the figures are in its memory */
	if (strcmp(metric, "mpr") == 0)
		value = f.mpr;
	else if (strncmp(metric, "precision_at_", 13) == 0)
		value = f.precision[0];
	else if (strncmp(metric, "recall_at_", 10) == 0)
		value = f.recall[0];
	else
		value = f.ndcg[0];
	*baskets = f.baskets;
	mtdpp_model_tables_done(nest);
	return value;
}
