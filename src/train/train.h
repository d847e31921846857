/*
 * train/train.h
 *		What mtdpp_train reads its lines from (source.c), the test baskets
 *		it holds out (held_out.c) and keeps (kept.c), and the rule that
 *		promotes its new version (promote.c), or an older one
 *		(activate.c); how its model comes back from the aggregate
 *		(handoff.c).
 */
#ifndef MTDPP_TRAIN_H
#define MTDPP_TRAIN_H

#include "fmgr.h"
#include "access/tupdesc.h"

#include "model/model.h"
#include "store/store.h"

/* source.c: a table or view, or a query */
typedef struct TrainSource
{
	Oid			relid;			/* the table or view; for a query, InvalidOid until it is
								 * run into a temporary table, then that table */
	char	   *query;			/* the query's text (one SELECT), else NULL */
	char	   *from;			/* what FROM names: the relation, or the query in parentheses */
	char	   *shown;			/* how messages name it */
	TupleDesc	desc;			/* the query's columns; NULL for a relation */
} TrainSource;

extern bool mtdpp_source_is_query(const char *text);
extern void mtdpp_source_open(TrainSource *src, Oid relid, const char *query);
extern bool mtdpp_source_column(const TrainSource *src, const char *col, Oid *type, Oid *collation);
extern const char *mtdpp_source_recorded(const TrainSource *src);
extern void mtdpp_source_materialize(TrainSource *src, const char **cols, int ncols);
extern void mtdpp_source_close(TrainSource *src);

/* held_out.c: test baskets held out of a training */
typedef struct HeldOut
{
	double		share;			/* 0: none */
	char	   *by;				/* the time or sequence column, or NULL: random */
	int64		seed;
	bool		last;			/* hold out each basket's last-added item */
	int			nk;
	int		   *k;				/* the cut-offs, increasing */
	char	   *predicate;		/* SQL: true for a line of a test basket (alias l) */
	Datum		orders;			/* int8[] of the test orders (by a column), else 0 */
	char	   *test_query;		/* SQL: (basket, held_out) of every test basket */
	struct MtdppTestFigures *figures;	/* the new version's, once measured */
} HeldOut;

extern void mtdpp_held_out_args(FunctionCallInfo fcinfo, int first, HeldOut *h, int64 seed, bool last);
extern void mtdpp_held_out_prepare(HeldOut *h, const TrainSource *src, const char *order_expr,
								   const char *item_expr, const char *pos_expr);
extern char *mtdpp_held_out_test(HeldOut *h, const MtdppModel *m, const char *name, int model_id,
								 double *mpr_out, int64 *baskets_out);
extern bool mtdpp_held_out_has(const HeldOut *h, const char *metric);
extern double mtdpp_held_out_figure(const HeldOut *h, const MtdppModel *m, const MtdppItemKeys *keys,
									const char *metric, int64 *baskets);
extern double mtdpp_held_out_own(const HeldOut *h, const char *metric);

/* kept.c: the held-out baskets a version keeps, by their keys */
extern int64 mtdpp_kept_store(const HeldOut *h, int model_id);
extern double mtdpp_kept_figure(int kept_id, int model_id, const char *metric, int64 *baskets);

/* promote.c: whether a new version becomes the active one */
extern void mtdpp_promote_init(void);
extern char *mtdpp_promote_rule(FunctionCallInfo fcinfo, int arg, const HeldOut *h, bool activate);
extern void mtdpp_promote(const char *name, int model_id, const char *rule, const HeldOut *h);
extern const char *mtdpp_activation_rule(FunctionCallInfo fcinfo, int arg);
extern int	mtdpp_promote_version(const char *name, int model_id, const char *rule);

/* handoff.c: the model mtdpp_train trains, from mtdpp_fit's final function in memory */
typedef struct MtdppHandoff MtdppHandoff;

extern MtdppHandoff *mtdpp_handoff_arm(const char *query, MemoryContext owner);
extern void mtdpp_handoff_disarm(MtdppHandoff *h);
extern bool mtdpp_handoff_wanted(FunctionCallInfo fcinfo);
extern bytea *mtdpp_handoff_give(MtdppModel *m, MemoryContext holder);
extern MtdppModel *mtdpp_handoff_take(MtdppHandoff *h, bytea *value, MemoryContext *holder);

#endif							/* MTDPP_TRAIN_H */
