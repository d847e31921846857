/*
 * mtdpp.h
 *		Shared definitions of the mtdpp extension.
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
#ifndef MTDPP_H
#define MTDPP_H

#include "postgres.h"

#include "common/pg_prng.h"
#include "fmgr.h"
#include "utils/jsonb.h"
#include "linalg.h"

/* bumped whenever the serialised model or aggregate state changes shape */
#define MTDPP_FORMAT_VERSION	1
#define MTDPP_MODEL_MAGIC		0x4d444450	/* "MDDP" */

#define MTDPP_MAX_RANK			1024
/* model names: at most this many bytes */
#define MTDPP_NAME_MAX			200
/* contexts beyond this many items keep their last (or a random) 100 */
#define MTDPP_MAX_CONTEXT		100
/* range of the hyperparameter w (and of exp(log_w) in a stored model) */
#define MTDPP_MIN_W				1e-12
#define MTDPP_MAX_W				1e12
/* EASE weights an item keeps, unless max_neighbors says otherwise */
#define MTDPP_EASE_NEIGHBORS	200
/* largest neighbour weight of a hybrid model (evidence times its weight) */
#define MTDPP_MAX_EVIDENCE		1e6

/* a model kind's number, in the stored model format; its routines: kinds.c */
typedef enum MtdppKind
{
	MTDPP_MULTITASK = 0,
	MTDPP_MULTITASK_NOBIAS,
	MTDPP_LOGISTIC,
	MTDPP_LOWRANK,
	MTDPP_ITEMKNN,
	MTDPP_POPULARITY,
	MTDPP_EASE,
	MTDPP_HYBRID,
	MTDPP_N_KINDS
} MtdppKind;

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
	int			max_neighbors;	/* neighbour lists kept per item, < 0: automatic */
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

/* Baskets gathered by the training aggregate: CSR over dense item indices. */
typedef struct MtdppBaskets
{
	int			n_baskets;
	int			n_items;
	int64		n_lines;
	int32	   *item_ids;		/* dense index -> item id, ascending */
	int32	   *popularity;		/* baskets holding each item */
	int64	   *start;			/* basket b is items[start[b] .. start[b+1]) */
	int32	   *items;			/* dense indices, in position order */
} MtdppBaskets;

/* A trained model, in memory. */
typedef struct MtdppModel
{
	MtdppKind	kind;
	int			n_items;
	int			rank;
	double		log_w;
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

	/*
	 * itemknn, ease: each item's neighbours and their weights (CSR);
	 * hybrid: co-occurrence lists, weighted by its evidence (kind_hybrid.c)
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
} MtdppModel;

/*
 * A validation slice of the training baskets (validation_slice.c): the baskets,
 * the item each hides, and the candidates its held-out items rank among.
 */
typedef struct MtdppValidation
{
	const MtdppBaskets *data;
	int			n;				/* validation baskets (0: none) */
	int32	   *baskets;		/* their indices in data */
	int32	   *held;			/* the item each hides */
	bool	   *is_val;			/* per basket of data: in the slice */
	bool	   *outside;		/* per item: not a candidate */
	int			n_candidates;
	bool		target_last;	/* the last item is the one hidden */
	int			max_context;
	bool	   *exclude;		/* scratch: outside, plus a context */
	int32	   *ctx;			/* scratch: a context */
} MtdppValidation;

/* How well a model completes a validation slice. */
typedef struct MtdppMetrics
{
	int			n;				/* baskets measured */
	double		mpr;
	double		p5;
	double		p10;
	double		p20;
} MtdppMetrics;

/* A hyperparameter whose default differs for a kind (params.c's keys). */
typedef struct MtdppKindDefault
{
	const char *key;
	double		value;
} MtdppKindDefault;

/*
 * A model kind: one struct of traits and routines, as PostgreSQL describes an
 * index access method by its IndexAmRoutine.  Each kind is one file
 * (kind_*.c) that fills its struct, and one line of the table in kinds.c;
 * the rest of the extension asks the kind (mtdpp_kind) rather than testing
 * which kind it is.
 */
typedef struct MtdppKindRoutine
{
	MtdppKind	kind;			/* its number in the stored model format */
	const char *name;			/* as SQL spells it */
	const MtdppKindDefault *defaults;	/* its own defaults, ended by a NULL key */

	/* what a model of the kind holds, in memory, in a value and in the tables */
	bool		factors;		/* item factors V (else rank 0) */
	bool		task_factors;	/* task factors R, stored (else R = 1) */
	bool		bias;			/* item bias D (else D = 0) */
	bool		neighbors;		/* co-occurring items and weights */
	bool		signed_weights; /* those weights are any finite reals (else in [0, 1]) */

	/*
	 * Training by the stochastic gradient of fit.c (fit = mtdpp_train_dpp):
	 * with task factors, a target against the rest of its basket; without,
	 * whole baskets under the one kernel L = V V^T + D^2, by maximum
	 * likelihood (-ln det L_B plus the normaliser) when LIKELIHOOD, else
	 * against baskets with one item swapped.
	 */
	bool		likelihood;

	/*
	 * Pruned top k (topk.c): the kind's score is ln w + ln det of a kernel
	 * per candidate, K_c = V_B diag(R_c^2) V_B^T + D_B^2, which Hadamard's
	 * inequality bounds; only the candidates whose bound can reach the k-th
	 * best score are scored exactly.  Other kinds score every candidate.
	 */
	bool		bounded;

	/* fits a model to DATA with the resolved hyperparameters P */
	MtdppModel *(*fit) (MtdppBaskets *data, const MtdppParams *p);

	/* scores every item as the completion of the context CTX of B items */
	void		(*score_all) (const MtdppModel *m, const int32 *ctx, int b,
							  double *scores);

	/* scores the N items CANDS, B > 0; NULL: through score_all */
	void		(*score_some) (const MtdppModel *m, const int32 *ctx, int b,
							   const int32 *cands, int n, double *scores);

	/* most basket items the kind conditions on; NULL: MTDPP_MAX_CONTEXT */
	int			(*context_limit) (const MtdppModel *m);
} MtdppKindRoutine;

/*
 * A cached model holds R squared in panels of MTDPP_PANEL items: a panel is
 * rank rows of MTDPP_PANEL floats, one per item (the last panel padded with
 * zeros).  The bounds of every candidate (topk.c) then run with one item a
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
 * far above the smallest normal float (2^-126): topk.c keeps the products
 * of its single-precision pass above it too.
 */
#define MTDPP_NEGLIGIBLE		0x1p-80 /* a factor V below this is zero */
#define MTDPP_NEGLIGIBLE_ROOT	0x1p-40 /* a task factor R or a bias D below this is zero */

/* params.c */
extern void mtdpp_params_defaults(MtdppParams *p, MtdppKind kind);
extern void mtdpp_params_parse(MtdppParams *p, Jsonb *json);
extern void mtdpp_params_resolve(MtdppParams *p, Jsonb *json);
extern void mtdpp_params_for_data(MtdppParams *p, int n_items);
extern bool mtdpp_param_given(const MtdppParams *p, const char *name);
extern void mtdpp_params_warm(MtdppParams *p, double old_rate, int old_epochs);
extern char *mtdpp_params_to_json(const MtdppParams *p);

/* kinds.c: the table of model kinds, and the calls through it */
extern const MtdppKindRoutine *mtdpp_kind(MtdppKind kind);
extern MtdppKind mtdpp_kind_from_name(const char *name);
extern const char *mtdpp_kind_name(MtdppKind kind);
extern MtdppModel *mtdpp_fit_model(MtdppBaskets *data, const MtdppParams *p);
extern void mtdpp_score_all(const MtdppModel *m, const int32 *ctx, int b,
							double *scores);
extern void mtdpp_score_some(const MtdppModel *m, const int32 *ctx, int b,
							 const int32 *cands, int n, double *scores);
extern int	mtdpp_context_limit(const MtdppModel *m);

/* kind_multitask.c, kind_single.c, kind_itemknn.c, kind_popularity.c, kind_ease.c */
extern const MtdppKindRoutine mtdpp_kind_multitask;
extern const MtdppKindRoutine mtdpp_kind_multitask_nobias;
extern const MtdppKindRoutine mtdpp_kind_logistic;
extern const MtdppKindRoutine mtdpp_kind_lowrank;
extern const MtdppKindRoutine mtdpp_kind_itemknn;
extern const MtdppKindRoutine mtdpp_kind_popularity;
extern const MtdppKindRoutine mtdpp_kind_ease;
extern const MtdppKindRoutine mtdpp_kind_hybrid;

/* kind_itemknn.c: co-occurrence lists, which the hybrid kind shares */
extern int	mtdpp_neighbor_cap(const MtdppBaskets *data, const MtdppParams *p,
							   MtdppKind kind, int rank);
extern int64 mtdpp_cooccurrence_lists(const MtdppBaskets *data, MtdppModel *m, int cap);
extern void mtdpp_report_neighbor_cap(const MtdppParams *p, const MtdppParams *given,
									  int64 distinct, int64 kept);

/* kind_ease.c: EASE's weights as neighbour lists, which the hybrid kind uses */
extern float mtdpp_kth_largest(float *v, int n, int k);
extern bool mtdpp_ease_lists(MtdppBaskets *data, const MtdppParams *p, double *lambda,
							 MtdppModel *m);


/* kind_popularity.c: what the other kinds share with it */
extern MtdppModel *mtdpp_counts_model(const MtdppBaskets *data, const MtdppParams *p);
extern void mtdpp_popularity_scores(const MtdppModel *m, double *scores);

/* helper_thread.c: a second thread for computation only */
typedef struct MtdppHelper MtdppHelper;
extern MtdppHelper *mtdpp_helper_start(void);
extern void mtdpp_helper_run_pair(MtdppHelper *h, void (*fn) (void *), void *a, void *b);

/* kernel.c: the numeric core, ln det of a context under a batch of targets */
extern const double *mtdpp_rows_R2(const MtdppModel *m, int start, int n, double *scratch);
extern void mtdpp_gather_R2(const MtdppModel *m, const int32 *idx, int n, double *out);
extern void mtdpp_gather_V(const MtdppModel *m, const int32 *idx, int n, double *out);
extern void mtdpp_schur_logdets(const MtdppModel *m, const int32 *ctx, int b,
								bool conditional, double *scores);
extern int	mtdpp_score_block_rows(const MtdppModel *m, int b);
extern void mtdpp_context_pairs(const double *VB, int b, int r, double *P);
extern void mtdpp_basket_pairs(const MtdppModel *m, const int32 *ctx, int b, double *P);
extern int	mtdpp_kernels_logdet(const MtdppModel *m, const int32 *ctx, int b,
								 const double *P, const double *R2rows, int nt,
								 double *packed, double *K, bool keep_factors,
								 double *logdet);
extern void mtdpp_targets_logdet(const MtdppModel *m, const int32 *ctx, int b,
								 const double *P, const int32 *targets, int first,
								 int n, int block, double *logdet);

/* model.c: a model in memory and as a value */
extern void *mtdpp_alloc_huge(Size size);
extern MtdppModel *mtdpp_model_alloc(MtdppKind kind, int n_items, int rank);
extern MtdppModel *mtdpp_model_alloc_cached(MtdppKind kind, int n_items, int rank);
extern void mtdpp_model_prepare(MtdppModel *m);
extern int	mtdpp_model_index(const MtdppModel *m, int32 item_id);
extern int	mtdpp_cmp_int32(const void *a, const void *b);
extern void mtdpp_check_model_size(const MtdppParams *p, int n_items);
extern int64 mtdpp_neighbor_room(MtdppKind kind, int n_items, int rank, int epochs);
extern bytea *mtdpp_model_serialize(const MtdppModel *m);
extern MtdppModel *mtdpp_model_deserialize(bytea *blob);
extern void mtdpp_evidence(const MtdppModel *m, const int32 *ctx, int b, double *ev);

/* model_check.c: what a valid model is */
typedef enum MtdppModelOrigin
{
	MTDPP_FROM_TRAINING,		/* just trained */
	MTDPP_FROM_VALUE,			/* read from a bytea (mtdpp_save) */
	MTDPP_FROM_TABLES			/* read from the model tables */
} MtdppModelOrigin;

extern void mtdpp_model_validate(const MtdppModel *m, MtdppModelOrigin origin);

/* validation_slice.c: a validation slice of the training baskets */
extern void mtdpp_validation_carve(MtdppValidation *v, const MtdppBaskets *d,
								   const MtdppParams *p, pg_prng_state *rng);
extern void mtdpp_validation_measure(MtdppValidation *v, const MtdppModel *m,
									 MtdppMetrics *out);
extern double mtdpp_validation_mpr(MtdppValidation *v, const MtdppModel *m);
extern MtdppBaskets *mtdpp_baskets_without(const MtdppBaskets *d, const bool *drop);
extern void mtdpp_validation_copy(MtdppValidation *to, const MtdppValidation *from);
extern int	mtdpp_validation_context(MtdppValidation *v, int k, int limit);
extern void mtdpp_validation_release(MtdppValidation *v, int k);

/* train.c: the fit of the DPP kinds */
extern MtdppModel *mtdpp_train_dpp(MtdppBaskets *data, const MtdppParams *p);
extern MtdppModel *mtdpp_train_dpp_rank(MtdppBaskets *data, const MtdppParams *p,
										const MtdppValidation *given,
										MtdppValidation *slice);
extern MtdppModel *mtdpp_model_copy(const MtdppModel *m);

/*
 * params_capacity.c: the rank and L2 of the multi-task kinds, chosen on the
 * validation slice when neither is given (rank MTDPP_RANK_CHOSEN)
 */
#define MTDPP_RANK_CHOSEN		(-1)
#define MTDPP_CAPACITY_LOW_RANK	32	/* the smaller rank the choice tries, */
#define MTDPP_CAPACITY_LOW_L2	1e-5	/* with this L2: the defaults until 0.3.0 */
#define MTDPP_CAPACITY_MAX_RANK	128 /* the larger rank the choice tries */
extern const MtdppKindDefault mtdpp_capacity_defaults[];
extern void mtdpp_capacity_resolve(MtdppParams *p);
extern int	mtdpp_capacity_max_rank(const MtdppParams *p);
extern MtdppModel *mtdpp_train_dpp_slice(MtdppBaskets *data, const MtdppParams *p,
										 MtdppValidation *slice);

/* store.c */
extern void mtdpp_check_name(const char *what, text *name);
extern text *mtdpp_text_arg(FunctionCallInfo fcinfo, int arg, const char *what);
extern void mtdpp_unknown_model(const char *name);
extern char *mtdpp_qualified_relation(Oid relid);
extern int	mtdpp_store_model(const char *name, MtdppModel *m, bool activate,
							  const char *source);
extern void mtdpp_store_metrics(int model_id, const char *json);

/* cache.c */
extern void mtdpp_cache_init(void);
extern MtdppModel *mtdpp_lookup_model(const char *name, int *model_id);
extern const MtdppModel *mtdpp_warm_start(MtdppParams *p);

/* shared_models.c: one copy of a model per server */
typedef struct MtdppItemVersion
{
	int32		item_id;
	TransactionId xmin;			/* of its row of mtdpp.items */
} MtdppItemVersion;

/* the rows a model was read from (see shared_models.c) */
typedef struct MtdppSharedKey
{
	Oid			db;
	int32		model_id;
	TransactionId xmin;			/* of its row of mtdpp.models */
	int32		n_items;
	int32		rank;
	uint64		hash;			/* of VERSIONS, by mtdpp_shared_key_hash */
	MtdppItemVersion *versions; /* n_items, by item_id */
} MtdppSharedKey;

typedef struct MtdppSharedClaim MtdppSharedClaim;

extern void mtdpp_shared_init(void);
extern bool mtdpp_shared_enabled(void);
extern void mtdpp_shared_key_hash(MtdppSharedKey *key);
extern MtdppModel *mtdpp_shared_get(const MtdppSharedKey *key, MemoryContext owner,
									MtdppSharedClaim **claim);
extern MtdppModel *mtdpp_shared_put(MtdppSharedClaim *claim, const MtdppModel *m);

/* topk.c */
typedef struct MtdppRanked
{
	double		score;
	int32		index;			/* dense item index */
} MtdppRanked;

extern int	mtdpp_top_k(const MtdppModel *m, const int32 *ctx, int b,
						const bool *exclude, const int32 *allowed, int n_allowed,
						int k, MtdppRanked *out);
extern void mtdpp_rank_of(const MtdppModel *m, const int32 *ctx, int b,
						  const bool *exclude, int held, double held_score_if_unknown,
						  int *above, int *ties, int *candidates);
extern int	mtdpp_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
								  const bool *exclude, double floor, const bool *also,
								  int32 *cands, double *scores);

/* diverse.c */
extern int	mtdpp_diverse_pool(int k);
extern int	mtdpp_diverse_select(const MtdppModel *m, const MtdppRanked *cands, int n,
								 int k, double diversity, int *chosen);

/* complete.c */
extern int32 *mtdpp_basket_context(const MtdppModel *m, const int32 *ids, int n,
								   const int32 *skip, bool *exclude, int *b_out,
								   int *n_distinct);

#endif							/* MTDPP_H */
