/*
 * model/model.h
 *		The model: its kind, its parameters in memory, its value (a bytea)
 *		and what a valid one is.
 *
 * One model struct serves every subsystem: the trainer fills it, the store
 * writes it to and reads it from the tables of schema mtdpp, the scorer
 * answers mtdpp_complete, mtdpp_score and mtdpp_evaluate from it.  What a
 * model of each kind holds, and how it is fitted and scored, is the kind's
 * struct of routines (MtdppKindRoutine, listed in kinds.c); the ln det of a
 * context's kernels, which training and scoring share, is kernel.c's.
 *
 * The multi-task DPP (Warlop, Mary, Gartrell, AAAI 2019) gives, for a basket
 * (context) C and a target item t,
 *
 *		K_t = V R_t^2 V^T + D^2,	P(y = 1 | C, t) = 1 - exp(-w det K_t[C])
 *
 * with V (items x rank) the item factors, R_t the diagonal task factors of t
 * and D the diagonal item bias.  Everything is computed in log space: the
 * score of t is ln(w det K_t[C]), from which P(y = 1 | C, t) =
 * 1 - exp(-exp(score)).
 */
#ifndef MTDPP_MODEL_H
#define MTDPP_MODEL_H

#include "postgres.h"

#include <math.h>

#include "portability/instr_time.h"

#include "kinds/kind.h"

/* bumped whenever the serialised model or aggregate state changes shape */
#define MTDPP_FORMAT_VERSION	1
#define MTDPP_MODEL_MAGIC		0x4d444450	/* "MDDP" */

#define MTDPP_MAX_RANK			1024
/* model names: at most this many bytes */
#define MTDPP_NAME_MAX			200
/* items of a diverse set (mtdpp_complete_set with diversity above 0) */
#define MTDPP_SET_MAX_K			500
/* contexts beyond this many items keep their last (or a random) 100 */
#define MTDPP_MAX_CONTEXT		100
/* range of the hyperparameter w (and of exp(log_w) in a stored model) */
#define MTDPP_MIN_W				1e-12
#define MTDPP_MAX_W				1e12
/* neighbours an item keeps, unless its kind or max_neighbors says otherwise */
#define MTDPP_DEFAULT_NEIGHBORS	200
/* largest unsigned neighbour weight but a cosine (evidence times its weight) */
#define MTDPP_MAX_EVIDENCE		1e6


/* A trained model, in memory. */
/*
 * The values of the keys a kind defines for itself (its folder's struct of
 * them, within MTDPP_KIND_VALUES_SIZE bytes): a block per kind in the
 * hyperparameters (fit/params.h), and the block of a model's own kind in
 * the model, for the values its scoring reads.
 */
#define MTDPP_KIND_VALUES_SIZE	64
typedef union MtdppKindValues
{
	char		bytes[MTDPP_KIND_VALUES_SIZE];
	double		align_double;
	int64		align_int64;
} MtdppKindValues;

/*
 * 0, or no build: a kind's struct TYPE of values must fit its block
 * (a larger one would write into the next kind's).  Every key a kind
 * defines and every read of its values goes through it.
 */
#define MTDPP_KIND_VALUES_FIT(type) \
	(0 * sizeof(char[sizeof(type) <= MTDPP_KIND_VALUES_SIZE ? 1 : -1]))

/* model M's values of its kind's own keys, as the kind's struct TYPE */
#define MTDPP_MODEL_PARAMS(m, type) \
	((type *) &(m)->own + MTDPP_KIND_VALUES_FIT(type))

typedef struct MtdppModel
{
	MtdppKind	kind;
	int			n_items;
	int			rank;
	double		log_w;

	/*
	 * Fits of rank / blocks held side by side in V and R (an ensemble's
	 * fits, a posterior's samples: the kind's blocks_key), a score the mean
	 * of theirs; 1 for one fit.  Read from the hyperparameters once, when
	 * the model is made or read; 0 or a count that does not divide the rank
	 * is refused by model_validate.c.
	 */
	int			blocks;
	int32	   *item_ids;		/* ascending: lookups by binary search */
	int32	   *popularity;
	double	   *V;				/* n_items x rank, row-major */
	double	   *R;				/* n_items x rank, row-major: task factors */
	double	   *D;				/* n_items */
	double	   *R2;				/* R squared, built by mtdpp_model_prepare */
	float	   *Vf;				/* a cached model's V and R squared, in float */
	float	   *R2f;			/* (V, R and R2 are then NULL); R2f in panels */
	double	   *D2;				/* D squared plus jitter, likewise */
	double	   *Vnorm2;			/* squared norms of V's rows, likewise */
	float	   *Rf;				/* a cached model's task factors of any sign, rows */

	/*
	 * a large cached model of one fit whose top k is bounded: its items by
	 * decreasing sum of squared task factors, those sums and their R2f
	 * panels, in that order (topk_scan.c reads them; NULL otherwise)
	 */
	int32	   *scan_order;
	double	   *scan_key;
	float	   *scan_R2f;
	float	   *scan_env;		/* per MTDPP_SCAN_GROUP positions, R2's maxima, in panels */

	/* the weights every item shares, if the kind has them (mtdpp.models.weights) */
	int			n_weights;
	double	   *weights;

	/*
	 * a kind with neighbours: each item's neighbours and their weights
	 * (CSR), which the kind reads as it means them (item-item weights,
	 * evidence of items bought together, association rules)
	 */
	int64	   *nbr_start;		/* n_items + 1 entries */
	int32	   *nbr_index;
	float4	   *nbr_weight;

	/* training record */
	int			n_baskets;
	int64		n_examples;
	int			epochs_run;
	int			best_epoch;
	double		final_loss;
	double		seconds;
	double	   *loss_history;	/* epochs_run entries */
	double	   *val_history;	/* epochs_run entries */
	char	   *hyperparams;	/* resolved hyperparameters, JSON text */

	/*
	 * The values of its kind's own keys that its scores read, set by the
	 * fit and read back from the stored hyperparameters by the kind's
	 * routine restore when the model is read (zeros for a kind without).
	 */
	MtdppKindValues own;
} MtdppModel;

/*
 * A cached model holds R squared in panels of MTDPP_PANEL items: a panel is
 * rank rows of MTDPP_PANEL floats, one per item (the last panel padded with
 * zeros).  The bounds of every candidate (topk_bounded.c) then run with one item a
 * SIMD lane, reading the panels straight through.
 */
#define MTDPP_PANEL 8

/* where item I's value J lies in panels of rank R */
static inline size_t
mtdpp_panel_cell(int r, int64 i, int j)
{
	return ((size_t) (i / MTDPP_PANEL) * r + j) * MTDPP_PANEL + i % MTDPP_PANEL;
}

static inline float
mtdpp_r2f(const MtdppModel *m, int i, int j)
{
	return m->R2f[mtdpp_panel_cell(m->rank, i, j)];
}

/* the items from which a cached model keeps a scan order (topk_scan.c) */
#define MTDPP_SCAN_MIN_ITEMS 8192
/* the items of the scan order that share an envelope (a multiple of MTDPP_PANEL) */
#define MTDPP_SCAN_GROUP 64

/* the panels of envelopes of a scan order of N items (a group a lane) */
static inline Size
mtdpp_scan_groups(int64 n)
{
	return (Size) ((n + (int64) MTDPP_SCAN_GROUP * MTDPP_PANEL - 1) / ((int64) MTDPP_SCAN_GROUP * MTDPP_PANEL));
}

/* added to every kernel diagonal so K stays positive definite without bias */
#define MTDPP_JITTER	1e-6

/*
 * Values too small to carry signal are zero, made so where they arise: in
 * the trainer's updates (fit_update.c) and when a model is read from the tables
 * (cache.c), so that no loop runs on subnormal numbers, which x86 processors
 * execute up to tens of times slower.  A kernel entry is a sum of terms
 * V_sj V_uj R_tj^2, and every kernel's diagonal is at least MTDPP_JITTER
 * (about 2^-20).  A term below MTDPP_NEGLIGIBLE (2^-80, times factors of
 * order 1, as trained factors are) is then below 2^-60 of the smallest
 * diagonal: it changes no ln det of a context of up to 100 items by more
 * than 2^-53, the rounding of a double, let alone the 2^-24 of the reals
 * the tables store.  So a factor below 2^-80 is zero, and a task factor or
 * a bias, which enter kernels squared, below 2^-40.  Nonzero values then
 * stay at or above 2^-80 (R^2 included) in single precision as in double,
 * far above the smallest normal float (2^-126): topk_bounded.c keeps the
 * products of its single-precision pass above it too.
 */
#define MTDPP_NEGLIGIBLE		0x1p-80 /* a factor V below this is zero */
#define MTDPP_NEGLIGIBLE_ROOT	0x1p-40 /* a task factor R or a bias D below this is zero */

/* model.c: a model in memory and as a value */
extern void *mtdpp_alloc_huge(Size size);
extern void mtdpp_release_freed(void);
extern MtdppModel *mtdpp_model_alloc(MtdppKind kind, int n_items, int rank);
extern MtdppModel *mtdpp_model_alloc_cached(MtdppKind kind, int n_items, int rank);
extern void mtdpp_model_prepare(MtdppModel *m);
extern int	mtdpp_model_index(const MtdppModel *m, int32 item_id);
extern int	mtdpp_cmp_int32(const void *a, const void *b);
extern int	mtdpp_cmp_by_key_desc(const void *a, const void *b, void *arg);
extern void mtdpp_check_model_size(MtdppKind kind, int n_items, int rank, int epochs, int json_len);
extern int	mtdpp_model_blocks(MtdppKind kind, const char *text);
extern Size mtdpp_model_budget(void);
extern bool mtdpp_model_budget_settable(void);
extern bool mtdpp_model_set_in_memory(bool in_memory);
extern void mtdpp_check_fitted_size(const MtdppModel *m);
extern Size mtdpp_model_value_size(MtdppKind kind, int n_items, int rank, int epochs);
extern int64 mtdpp_neighbor_room(MtdppKind kind, int n_items, int rank, int epochs);
extern bytea *mtdpp_model_serialize(const MtdppModel *m);
extern MtdppModel *mtdpp_model_deserialize(bytea *blob);
extern MtdppModel *mtdpp_model_copy(const MtdppModel *m);
extern void mtdpp_model_restore(MtdppModel *m,
								const char *(*value_of) (const char *key, void *arg),
								void *arg);

/* model_validate.c: what a valid model is */
typedef enum MtdppModelOrigin
{
	MTDPP_FROM_TRAINING,		/* just trained */
	MTDPP_FROM_VALUE,			/* read from a bytea (mtdpp_save) */
	MTDPP_FROM_TABLES			/* read from the model tables */
} MtdppModelOrigin;

/* how a model that breaks the definition is refused, by where it comes from */
typedef struct MtdppRefusal
{
	int			sqlstate;
	const char *hint;
} MtdppRefusal;

extern void mtdpp_model_validate(const MtdppModel *m, MtdppModelOrigin origin);

/* the best validation MPR fit M reached, NaN without a slice */
static inline double
mtdpp_best_mpr(const MtdppModel *m)
{
	if (m->best_epoch < 1 || m->best_epoch > m->epochs_run)
		return NAN;
	return m->val_history[m->best_epoch - 1];
}

/* a value as the tables hold it: single precision */
static inline double
mtdpp_as_real(double x)
{
	return (double) (float) x;
}

/* V[i][j] as the tables (and so the cache) hold it */
static inline double
mtdpp_factor_at(const MtdppModel *m, int i, int j)
{
	size_t		c = (size_t) i * m->rank + j;

	return m->V ? mtdpp_as_real(m->V[c]) : (double) m->Vf[c];
}

/* seconds from START to now: the fits' timings, reported and stored */
static inline double
mtdpp_seconds_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_DOUBLE(now);
}

#endif							/* MTDPP_MODEL_H */
