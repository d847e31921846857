/*
 * train/params.h
 *		The hyperparameters of a fit: parsed from the call's jsonb, given their
 *		defaults by kind (params.c), the rank and L2 policy (fit_capacity.c),
 *		a warm start's own (params_warm.c).
 */
#ifndef MTDPP_PARAMS_H
#define MTDPP_PARAMS_H

#include "utils/jsonb.h"

#include "model/model.h"

/*
 * The kind trained when a call names none: the hybrid since 0.4.0 (the
 * multi-task DPP before).  A stored model keeps the kind it was trained as.
 */
#define MTDPP_DEFAULT_KIND	MTDPP_HYBRID

typedef enum MtdppTarget
{
	MTDPP_TARGET_RANDOM = 0,
	MTDPP_TARGET_LAST
} MtdppTarget;

typedef enum MtdppLoss
{
	MTDPP_LOSS_LOGISTIC = 0,	/* the paper's: y ln P + (1 - y) ln(1 - P) */
	MTDPP_LOSS_SOFTMAX			/* the positive against its negatives */
} MtdppLoss;

/* how EASE's weights are fitted (kind ease, and the hybrid's evidence) */
typedef enum MtdppEaseSolver
{
	MTDPP_EASE_AUTO = 0,		/* exact up to MTDPP_EASE_EXACT_ITEMS items */
	MTDPP_EASE_EXACT,			/* the inverse of X^T X + lambda I (ease_exact.c) */
	MTDPP_EASE_NEIGHBORHOOD		/* item by item, on neighbourhoods (ease_neighborhood.c) */
} MtdppEaseSolver;

typedef enum MtdppOptimizer
{
	MTDPP_OPT_ADAM = 0,
	MTDPP_OPT_MOMENTUM
} MtdppOptimizer;

/* Hyperparameters, resolved: every field holds a value after parsing. */
typedef struct MtdppParams
{
	MtdppKind	kind;
	MtdppTarget target;
	MtdppOptimizer optimizer;
	MtdppLoss	loss;
	int			rank;
	int			epochs;
	int			batch_size;
	int			negatives;		/* negative targets per positive */
	int			positives;		/* positive targets per basket and epoch, 0 = all */
	int			patience;		/* epochs without validation gain before stopping */
	int			max_context;	/* larger training contexts are subsampled */
	int			epoch_baskets;	/* baskets an epoch samples, 0 = all */
	double		learning_rate;
	double		lr_decay;		/* learning rate multiplied by this each epoch */
	double		momentum;
	double		negative_power; /* negatives drawn by popularity^power, 0 = uniform */
	double		l2;
	double		l2_bias;
	double		log_w;			/* ln w, the logistic scale */
	double		init_scale;
	double		validation_fraction;
	int			validation_baskets;	/* cap on the validation slice */
	int			validation_candidates;	/* candidates ranked per validation basket */
	double		lambda;			/* ease: L2 of its weights, < 0: chosen on validation */
	MtdppEaseSolver ease_solver;
	double		ease_dropout;	/* ease, hybrid: lambda I + dropout / (1 - dropout) diag(G) */
	int			max_neighbors;	/* neighbour lists kept per item, < 0: automatic */
	double		min_support;	/* rules: share of baskets, < 0: chosen on validation */
	double		min_confidence; /* rules: < 0: chosen on validation */
	int			max_antecedent; /* rules: items of an antecedent, < 0: chosen */
	double		poisson_a;		/* poisson: shape of the basket factors' prior */
	double		poisson_c;		/* poisson: shape of the item factors' prior */
	int			samples;		/* bayesian_lowrank: samples of V kept */
	int			burn_in;		/* bayesian_lowrank: Langevin epochs before the first */
	int			thinning;		/* bayesian_lowrank: steps between samples, < 0: automatic */
	double		prior_precision;	/* bayesian_lowrank: of the Gaussian prior on V */
	double		step_size;		/* bayesian_lowrank: the first Langevin step */
	int			fits;			/* multi-task kinds: independent fits kept side by side */
	int64		seed;
	bool		verbose;
	char		warm_start[MTDPP_NAME_MAX + 1];	/* model to start from, "" for none */
	const struct MtdppModel *warm;	/* its active version, looked up for the fit */
	double		warm_learning_rate; /* where a warm start begins, < 0: chosen */
	int			warm_epochs;	/* a warm start's epochs, unless epochs is given */
	int			warm_patience;	/* and its patience, unless patience is given */
	double		warm_old_baskets;	/* old baskets per new one in its epochs, 0 = all */
	bool		warm_slice;		/* a warm start chooses its validation slice */
	uint64		given;			/* keys the caller set, a bit per key of params.c */
} MtdppParams;

/* A hyperparameter whose default differs for a kind (params.c's keys). */
typedef struct MtdppKindDefault
{
	const char *key;
	double		value;
} MtdppKindDefault;

/* params.c */
extern void mtdpp_params_defaults(MtdppParams *p, MtdppKind kind);
extern void mtdpp_params_parse(MtdppParams *p, Jsonb *json);
extern void mtdpp_params_resolve(MtdppParams *p, Jsonb *json);
extern void mtdpp_params_for_data(MtdppParams *p, int n_items);
extern bool mtdpp_param_given(const MtdppParams *p, const char *name);
extern char *mtdpp_params_to_json(const MtdppParams *p);

/* params_warm.c: what a warm start resolves from the model it starts from */
extern void mtdpp_params_warm(MtdppParams *p, double old_rate, int old_epochs);

/*
 * params_params_capacity.c: the rank and L2 of the multi-task kinds, chosen on the
 * validation slice when neither is given (rank MTDPP_RANK_CHOSEN)
 */
#define MTDPP_RANK_CHOSEN		(-1)
#define MTDPP_CAPACITY_LOW_RANK	32	/* the smaller rank the choice tries, */
#define MTDPP_CAPACITY_LOW_L2	1e-5	/* with this L2: the defaults until 0.3.0 */
#define MTDPP_CAPACITY_MAX_RANK	128 /* the larger rank the choice tries */
extern const MtdppKindDefault mtdpp_capacity_defaults[];
extern void mtdpp_capacity_resolve(MtdppParams *p);
extern int	mtdpp_capacity_max_rank(const MtdppParams *p);

#endif							/* MTDPP_PARAMS_H */
