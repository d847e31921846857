/*
 * model/kinds.h
 *		The kinds of model: the struct of traits and routines each kind
 *		fills (its folder, kinds/<kind>/), the table of them (kinds.c) and
 *		what kinds share with one another.
 */
#ifndef MTDPP_KINDS_H
#define MTDPP_KINDS_H

#include "model/baskets.h"
#include "model/model.h"

/* the hyperparameters (fit/params.h), which a kind's routines take */
struct MtdppParams;
struct MtdppParamKey;
struct MtdppKindDefault;

/* a completion and its score (score/score.h), which a kind's top_k gives */
struct MtdppRanked;

/*
 * A model kind: one struct of traits and routines, as PostgreSQL describes an
 * index access method by its IndexAmRoutine.  Each kind is one folder
 * (kinds/<kind>/) whose main file fills its struct, and a line in each file
 * of the list (kinds/list.h numbers it, kinds/list.c enters it); the rest of
 * the extension asks the kind (mtdpp_kind) rather than testing which kind it
 * is, and names none (scripts/check-layout).
 *
 * Words: a kind's "fit" makes a model from baskets (its fit routine; the
 * aggregate mtdpp_fit runs one); "training" is the SQL around it
 * (mtdpp_train, train/); "validating" a model checks its values
 * (model_validate.c); a "gradient check" compares the fit's gradients with
 * finite differences (gradient_check.c).
 */
typedef struct MtdppKindRoutine
{
	MtdppKind	kind;			/* its number in the stored model format */
	const char *name;			/* as SQL spells it */

	/*
	 * Its hyperparameters: the keys it defines (their values in its block of
	 * MtdppParams, ended by a NULL name), the names of the other keys it
	 * takes beyond those of every kind (ended by NULL), and its defaults
	 * where they differ from a key's own (ended by a NULL key).
	 */
	const struct MtdppParamKey *own_keys;
	const char *const *keys;
	const struct MtdppKindDefault *defaults;

	/*
	 * The integer key counting the fits of the rank its models hold side by
	 * side (an ensemble's fits, a posterior's samples), or NULL: one.  The
	 * model's rank is that many times a fit's, and a score is their mean.
	 */
	const char *blocks_key;

	/* what a model of the kind holds, in memory, in a value and in the tables */
	bool		factors;		/* item factors V (else rank 0) */
	bool		task_factors;	/* task factors R, stored (else R = 1) */
	bool		bias;			/* item bias D (else D = 0) */
	bool		neighbors;		/* co-occurring items and weights */
	bool		signed_weights; /* those weights are any finite reals (else nonnegative) */
	bool		cosine_weights; /* nonnegative weights are cosines, at most 1 (else MTDPP_MAX_EVIDENCE) */
	bool		signed_task_factors;	/* R of any sign, cached as it is (Rf), not as R^2 */
	bool		weights;		/* weights shared by every item (a recurrent network's) */
	bool		single_items;	/* learns from baskets of one item too (counts items alone) */
	bool		add_order;		/* learns from the order items were added (needs positions) */
	bool		own_capacity;	/* has factors, but chooses its rank alone (not params_capacity.c) */

	/*
	 * Training by the stochastic gradient of fit.c (fit = mtdpp_fit_dpp):
	 * with task factors, a target against the rest of its basket; without,
	 * whole baskets under the one kernel L = V V^T + D^2, by maximum
	 * likelihood (-ln det L_B plus the normaliser) when LIKELIHOOD, else
	 * against baskets with one item swapped.
	 */
	bool		likelihood;

	/*
	 * Trained by the same stochastic gradient, but scored by a second-order
	 * factorization machine (fit_bilinear.c) rather than a ln det: a target's
	 * score is D_t + <V_t, sum over the context of V_i / sqrt(b)>, against
	 * the rest of its basket as the multi-task kinds' targets are.
	 */
	bool		bilinear;

	/*
	 * The kind's score is ln w + ln det of a kernel per candidate,
	 * K_c = V_B diag(R_c^2) V_B^T + D_B^2 (plus a term of its own), which
	 * Hadamard's inequality bounds: its routines top_k, ranks_of and
	 * scores_reaching call the pruning of score/topk_bounded.c, and a large
	 * cached model of it keeps the scan order that pruning reads (model.c).
	 */
	bool		bounded;

	/*
	 * Several independent fits side by side (the hyperparameter "fits"):
	 * an item's factors and task factors hold each fit's rank in turn, and
	 * a score is the mean of the fits'.
	 */
	bool		ensemble;

	/* fits a model to DATA with the resolved hyperparameters P */
	MtdppModel *(*fit) (MtdppBaskets *data, const struct MtdppParams *p);

	/*
	 * What a fit of P chooses on its validation slice, or NULL, and into
	 * *INSTEAD how to train without one (", or give ..."), for the error of
	 * a call that leaves no slice.  NULL: a kind with factors chooses its
	 * rank and L2 when neither is given, and nothing else.
	 */
	const char *(*chooses) (const struct MtdppParams *p, const char **instead);

	/*
	 * Checks the values of model M that the kind constrains in its own way
	 * (model_validate.c's rules for factors and for neighbour lists do not
	 * hold for it), refusing a bad one as REFUSE says.  NULL: those rules.
	 */
	void		(*validate) (const MtdppModel *m, const MtdppRefusal *refuse);

	/*
	 * Reads back into M's own values (MtdppModel.own, which its fit set)
	 * those its scores read, from its stored hyperparameters, when a model
	 * is read from a value or the tables: VALUE_OF(KEY, ARG) gives the
	 * text a key's value is stored as, or NULL where the model does not
	 * store the key.  NULL: its scores read no own value.
	 */
	void		(*restore) (MtdppModel *m,
							const char *(*value_of) (const char *key, void *arg),
							void *arg);

	/* scores every item as the completion of the context CTX of B items */
	void		(*score_all) (const MtdppModel *m, const int32 *ctx, int b,
							  double *scores);

	/* scores the N items CANDS, B > 0; NULL: through score_all */
	void		(*score_some) (const MtdppModel *m, const int32 *ctx, int b,
							   const int32 *cands, int n, double *scores);

	/*
	 * The answers of score/topk.c for a context of B > 0 items, for a kind
	 * that finds them without scoring every candidate (the bounded kinds,
	 * through score/topk_bounded.c): the K best candidates (mtdpp_top_k;
	 * not for an allowed list of K or fewer, which is scored), the ranks of
	 * NH > 0 held-out items (mtdpp_ranks_of), the candidates whose score
	 * can reach FLOOR (mtdpp_scores_reaching), each with the arguments and
	 * answer of the function it serves.  All three or none; NULL: every
	 * candidate is scored (score_all, score_some) and the best selected.
	 */
	int			(*top_k) (const MtdppModel *m, const int32 *ctx, int b,
						  const bool *exclude, const int32 *allowed, int n_allowed,
						  int k, struct MtdppRanked *out);
	void		(*ranks_of) (const MtdppModel *m, const int32 *ctx, int b,
							 const bool *exclude, const int32 *held, int nh,
							 double held_score_if_unknown, int *above, int *ties,
							 int *candidates);
	int			(*scores_reaching) (const MtdppModel *m, const int32 *ctx, int b,
									const bool *exclude, double floor, const bool *also,
									int32 *cands, double *scores);

	/* most basket items the kind conditions on; NULL: MTDPP_MAX_CONTEXT */
	int			(*context_limit) (const MtdppModel *m);

	/*
	 * mtdpp_explain of a kind whose score comes from one piece of evidence:
	 * the basket items of the evidence that decides the score of candidate
	 * C into ITEMS (dense indices, at most B), how many (0: none, the
	 * candidate ranks by popularity), its weight into *WEIGHT.  NULL: the
	 * basket items' leave-one-out contributions.
	 */
	int			(*explain) (const MtdppModel *m, const int32 *ctx, int b, int c,
							int32 *items, double *weight);

	/*
	 * mtdpp_explain of a kind whose score is a sum over the basket items:
	 * the contribution of basket item s to candidate CANDS[c] into
	 * OUT[s * n + c] (B > 0).  NULL (and no explain): leave-one-out.
	 */
	void		(*contributions) (const MtdppModel *m, const int32 *ctx, int b,
								  const int32 *cands, int n, double *out);

	/*
	 * mtdpp_similar: how like ITEM (a dense index) every item is by the
	 * kind's own measure, into SIM (n_items entries), and the tier each
	 * ranks in into TIER: a higher tier ranks first whatever the measure,
	 * MTDPP_SIMILAR_NONE marks an item the measure says nothing of (never
	 * proposed).  NULL: the kind has no measure of similarity.
	 */
	void		(*similar) (const MtdppModel *m, int item, double *sim, int8 *tier);
} MtdppKindRoutine;

/* the tier of an item the kind's measure of similarity says nothing of */
#define MTDPP_SIMILAR_NONE	(-1)

/* kinds.c: the table of model kinds, and the calls through it */
extern const MtdppKindRoutine *mtdpp_kind(MtdppKind kind);
extern MtdppKind mtdpp_kind_from_name(const char *name);
extern bool mtdpp_kind_exists(int kind);
extern const char *mtdpp_kind_name(MtdppKind kind);
extern void mtdpp_score_all(const MtdppModel *m, const int32 *ctx, int b,
							double *scores);
extern void mtdpp_score_some(const MtdppModel *m, const int32 *ctx, int b,
							 const int32 *cands, int n, double *scores);
extern int	mtdpp_context_limit(const MtdppModel *m);
extern void mtdpp_kind_register(const MtdppKindRoutine *kind);
extern void mtdpp_kind_register_default(MtdppKind kind);
extern MtdppKind mtdpp_default_kind(void);

/* kinds/list.c: every kind, registered when the library loads */
extern void mtdpp_kinds_init(void);

#endif							/* MTDPP_KINDS_H */
