/*
 * train/held_out.c
 *		Test baskets a training holds out by itself, and their figures.
 *
 * A share of the source's baskets is left out of the lines the aggregate
 * reads, chosen one of two ways:
 *
 *	- at random: a basket is a test basket when the hash of its order id
 *	  with the seed falls in the share.  It depends on the order id alone,
 *	  not on the plan or the other lines, so a nightly retraining with the
 *	  same seed and share holds out the same baskets, and new baskets in the
 *	  same share: the version it replaces never trained on them.
 *	- by a time or sequence column (test_by): the latest baskets, those
 *	  whose greatest value of the column is among the share's highest (ties
 *	  broken by order id): what the next weeks hold, after training on the
 *	  past.
 *
 * Each test basket holds out one item, as the project's protocol does
 * (data/README.md): a random one (seeded, by the hash of the order and the
 * item), or with target => 'last' the last added (the greatest position).
 * Only baskets of two distinct items or more count, as in the protocol's
 * splits.  The model is then ranked on them as mtdpp_evaluate ranks
 * (evaluate.c), every item of the model a candidate, and the figures are
 * recorded with the version: MPR, and precision, recall and NDCG at the
 * cut-offs the call names.  The promotion rule (promote.c) measures the
 * active version on the same baskets; the version keeps them by their keys
 * (kept.c), for mtdpp_activate's rule.
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

#include "model/kinds.h"
#include "query/arguments.h"
#include "shown.h"
#include "train/train.h"

/* the hash buckets of the random choice: a share is a whole number of them */
#define SHARE_BUCKETS	1000000

static const int default_k[] = {5, 10, 20};

/*
 * The held-out arguments of mtdpp_train from argument FIRST on: test_share,
 * test_by, test_k; SEED and LAST (target => 'last') as the training's.
 */
void
mtdpp_held_out_args(FunctionCallInfo fcinfo, int first, HeldOut *h, int64 seed, bool last)
{
	memset(h, 0, sizeof(*h));
	h->seed = seed;
	h->last = last;
	h->by = PG_ARGISNULL(first + 1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(first + 1));
	if (!PG_ARGISNULL(first))
	{
		h->share = PG_GETARG_FLOAT8(first);
		if (isnan(h->share) || h->share <= 0.0 || h->share >= 1.0 ||
			rint(h->share * SHARE_BUCKETS) < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("test_share must be above 0 and below 1, not %g", h->share),
					 errhint("Hold out a share of the baskets such as test_share => 0.1, or leave test_share out for no test.")));
	}
	else if (h->by != NULL)
		h->share = 0.1;			/* the latest tenth */
	if (h->by != NULL && h->by[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("test_by must name a column"),
				 errhint("Name the time or sequence column that orders the baskets, such as test_by => 'ordered_at', or leave it out for a random choice.")));
	if (PG_ARGISNULL(first + 2))
	{
		h->nk = lengthof(default_k);
		h->k = (int *) default_k;
	}
	else if (h->share == 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("test_k needs test baskets"),
				 errhint("Hold out a share of the baskets with test_share => 0.1 (or test_by => '...'), or leave test_k out.")));
	else
		h->nk = mtdpp_k_values(fcinfo, first + 2, "test_k", &h->k);
}

static const char *
float_sql(double v)
{
	return psprintf("'%.17g'::pg_catalog.float8", v);
}

/*
 * The test orders by column H->by of SRC: the latest share of the baskets,
 * as an int8[] of order ids (ORDER_EXPR) into H->orders, in the current
 * memory context.  Inside an SPI connection.
 */
static void
latest_orders(HeldOut *h, const TrainSource *src, const char *order_expr)
{
	MemoryContext into = CurrentMemoryContext;
	Oid			type;
	TypeCacheEntry *tc;
	char	   *sql;
	bool		isnull;
	Datum		d;

	if (!mtdpp_source_column(src, h->by, &type, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" (test_by) does not exist in %s", mtdpp_shown(h->by), src->shown),
				 errhint("Name the time or sequence column that orders the baskets, such as test_by => 'ordered_at'.")));
	tc = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	if (!OidIsValid(tc->lt_opr) || !OidIsValid(tc->gt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" (test_by) has type %s, which has no order", mtdpp_shown(h->by),
						format_type_be(type)),
				 errhint("Name a column of a type that sorts, such as a timestamp, a date or a sequence number.")));
	sql = psprintf("SELECT pg_catalog.array_agg(s.o ORDER BY s.o) FROM ("
				   "SELECT b.o, pg_catalog.row_number() OVER (ORDER BY b.t DESC NULLS LAST, b.o DESC) AS r, "
				   "pg_catalog.count(*) OVER () AS n FROM ("
				   "SELECT %s AS o, pg_catalog.max(l.%s) AS t FROM %s WHERE %s IS NOT NULL GROUP BY 1) b) s "
				   "WHERE s.r::pg_catalog.float8 OPERATOR(pg_catalog.<=) "
				   "pg_catalog.ceil(s.n::pg_catalog.float8 OPERATOR(pg_catalog.*) %s)",
				   order_expr, quote_identifier(h->by), src->from, order_expr, float_sql(h->share));
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not run %s", sql);
	/* SPI_execute returns into SPI's own context */
	MemoryContextSwitchTo(into);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("%s holds no basket to hold out", src->shown),
				 errhint("Train from a source of order lines.")));
	h->orders = datumCopy(d, false, -1);
}

/*
 * The SQL that holds out H's baskets of SRC (its order id, item and
 * position read as ORDER_EXPR, ITEM_EXPR and POS_EXPR, NULL without
 * positions): the predicate of a test line, and the query of the test
 * baskets, in the current memory context.  Inside an SPI connection.
 */
void
mtdpp_held_out_prepare(HeldOut *h, const TrainSource *src, const char *order_expr,
					   const char *item_expr, const char *pos_expr)
{
	char	   *held_order,
			   *test_predicate;

	if (h->by != NULL)
	{
		latest_orders(h, src, order_expr);
		h->predicate = psprintf("%s OPERATOR(pg_catalog.=) ANY ($3::pg_catalog.int8[])", order_expr);
		test_predicate = psprintf("%s OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.int8[])", order_expr);
	}
	else
		test_predicate = h->predicate = psprintf("pg_catalog.abs(pg_catalog.hashint8extended(%s, " INT64_FORMAT "::pg_catalog.int8) "
								"OPERATOR(pg_catalog.%%) %d::pg_catalog.int8) OPERATOR(pg_catalog.<) %d::pg_catalog.int8",
								order_expr, h->seed, SHARE_BUCKETS, (int) rint(h->share * SHARE_BUCKETS));
	if (h->last && pos_expr != NULL)
		held_order = psprintf("%s DESC NULLS LAST, %s", pos_expr, item_expr);
	else
		held_order = psprintf("pg_catalog.hashtextextended((%s)::pg_catalog.text OPERATOR(pg_catalog.||) ' ' "
							  "OPERATOR(pg_catalog.||) (%s)::pg_catalog.text, " INT64_FORMAT "::pg_catalog.int8), %s",
							  order_expr, item_expr, h->seed, item_expr);
	h->test_query = psprintf("SELECT s.basket, s.held FROM ("
							 "SELECT pg_catalog.array_agg(DISTINCT %s) AS basket, "
							 "(pg_catalog.array_agg(%s ORDER BY %s))[1] AS held "
							 "FROM %s WHERE (%s) AND %s IS NOT NULL GROUP BY %s) s "
							 "WHERE pg_catalog.cardinality(s.basket) OPERATOR(pg_catalog.>=) 2",
							 item_expr, item_expr, held_order, src->from, test_predicate, item_expr,
							 order_expr);
}

/* M (keys KEYS) measured on H's test baskets, into F */
static void
measure(const HeldOut *h, const MtdppModel *m, const MtdppItemKeys *keys, MtdppTestFigures *f)
{
	f->nk = h->nk;
	f->k = h->k;
	f->precision = palloc0(sizeof(double) * h->nk);
	f->recall = palloc0(sizeof(double) * h->nk);
	f->ndcg = palloc0(sizeof(double) * h->nk);
	mtdpp_evaluate_baskets(m, keys, h->test_query, h->orders ? 1 : 0,
						   (Oid[]) {INT8ARRAYOID}, (Datum[]) {h->orders}, f);
}

/*
 * The figure METRIC (mpr, or precision_at_K, recall_at_K, ndcg_at_K for a
 * K of H) of F; false if H has no such metric.
 */
static bool
figure(const HeldOut *h, const MtdppTestFigures *f, const char *metric, double *value)
{
	const char *names[] = {"precision_at_%d", "recall_at_%d", "ndcg_at_%d"};

	if (strcmp(metric, "mpr") == 0)
	{
		if (f)
			*value = f->mpr;
		return true;
	}
	for (int i = 0; i < h->nk; i++)
		for (int w = 0; w < lengthof(names); w++)
			if (strcmp(metric, psprintf(names[w], h->k[i])) == 0)
			{
				if (f)
					*value = w == 0 ? f->precision[i] : w == 1 ? f->recall[i] : f->ndcg[i];
				return true;
			}
	return false;
}

/* whether METRIC names a figure of H's test */
bool
mtdpp_held_out_has(const HeldOut *h, const char *metric)
{
	return figure(h, NULL, metric, NULL);
}

/*
 * Measures M, stored as MODEL_ID of NAME, on H's test baskets, keeping the
 * figures in H; returns them as the JSON recorded with the version.
 */
char *
mtdpp_held_out_test(HeldOut *h, const MtdppModel *m, const char *name, int model_id,
					double *mpr_out, int64 *baskets_out)
{
	MtdppTestFigures *f = palloc0(sizeof(MtdppTestFigures));
	MtdppItemKeys *keys;
	MtdppModel *stored;
	int			nest;
	int64		kept;
	StringInfoData j;

	/*
	 * The version just stored, read back as completions read it (a snapshot
	 * that sees it): the model the fit returned lacks what loading builds.
	 */
	nest = mtdpp_model_tables_connect();
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	stored = mtdpp_read_model_rows(CurrentMemoryContext, model_id, name, mtdpp_kind_name(m->kind), m->rank,
								   m->n_items, m->n_baskets, m->log_w, false);
	keys = mtdpp_read_item_keys(CurrentMemoryContext, model_id);
	measure(h, stored, keys, f);
	/* kept by their keys, for mtdpp_activate's rule (kept.c) */
	kept = f->baskets > 0 ? mtdpp_kept_store(h, model_id) : 0;
	PopActiveSnapshot();
	mtdpp_model_tables_done(nest);
	if (f->baskets == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("no test basket to measure the model on"),
				 errdetail("No basket of two distinct items or more fell in the held-out share (%g).", h->share),
				 errhint("Hold out a larger share with test_share, or train without one.")));
	h->figures = f;
	*mpr_out = f->mpr;
	*baskets_out = f->baskets;

	initStringInfo(&j);
	appendStringInfo(&j, "{\"baskets\": " INT64_FORMAT ", \"kept\": " INT64_FORMAT ", \"chosen\": \"%s\", \"share\": %g, ",
					 f->baskets, kept, h->by ? "latest" : "random", h->share);
	if (h->by)
	{
		appendStringInfoString(&j, "\"by\": ");
		escape_json(&j, h->by);
	}
	else
		appendStringInfo(&j, "\"seed\": " INT64_FORMAT, h->seed);
	appendStringInfo(&j, ", \"held_out\": \"%s\", \"mpr\": %.4f",
					 h->last ? "last" : "random", f->mpr);
	for (int i = 0; i < h->nk; i++)
		appendStringInfo(&j, ", \"precision_at_%d\": %.4f, \"recall_at_%d\": %.4f, \"ndcg_at_%d\": %.4f",
						 h->k[i], f->precision[i], h->k[i], f->recall[i], h->k[i], f->ndcg[i]);
	appendStringInfoChar(&j, '}');
	return j.data;
}

/*
 * The figure METRIC of model M (keys KEYS) on the baskets H held out,
 * measured anew.  Inside an SPI connection.
 */
double
mtdpp_held_out_figure(const HeldOut *h, const MtdppModel *m, const MtdppItemKeys *keys,
					  const char *metric, int64 *baskets)
{
	MtdppTestFigures f = {0};
	double		value = 0.0;

	measure(h, m, keys, &f);
	(void) figure(h, &f, metric, &value);
	*baskets = f.baskets;
	return value;
}

/* the figure METRIC of the new version, measured by mtdpp_held_out_test */
double
mtdpp_held_out_own(const HeldOut *h, const char *metric)
{
	double		value = 0.0;

	(void) figure(h, h->figures, metric, &value);
	return value;
}
