/*
 * fit/params.h
 *		The hyperparameters of a fit: parsed from the call's jsonb, given their
 *		defaults by kind (params.c), the rank and L2 policy (params_capacity.c),
 *		a warm start's own (warm_start.c).
 */
#ifndef MTDPP_PARAMS_H
#define MTDPP_PARAMS_H

#include "utils/jsonb.h"

#include "model/model.h"

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
	int			max_neighbors;	/* neighbour lists kept per item, < 0: automatic */
	int			fits;			/* independent fits kept side by side (an ensemble) */
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
	MtdppKindValues own[MTDPP_N_KINDS]; /* the values of each kind's own keys (model.h) */
} MtdppParams;

/* the block of P holding the values of KIND's own keys */
static inline void *
mtdpp_kind_values(const MtdppParams *p, MtdppKind kind)
{
	return (void *) &p->own[kind];
}

/* the offset of FIELD in a kind's struct TYPE of values, as its key names it */
#define MTDPP_KIND_FIELD(type, field) (offsetof(type, field) + MTDPP_KIND_VALUES_FIT(type))

/* P's values of KIND's own keys, as its struct TYPE */
#define MTDPP_KIND_PARAMS(p, kind, type) \
	((type *) mtdpp_kind_values((p), (kind)) + MTDPP_KIND_VALUES_FIT(type))

typedef enum MtdppParamType
{
	MTDPP_PARAM_INT,			/* int field */
	MTDPP_PARAM_INT64,			/* int64 field */
	MTDPP_PARAM_REAL,			/* double field */
	MTDPP_PARAM_LOG,			/* double field holding the log of the value */
	MTDPP_PARAM_BOOL,			/* bool field */
	MTDPP_PARAM_CHOICE,			/* enum field: the index of one of CHOICES */
	MTDPP_PARAM_TEXT			/* char[] field of MTDPP_NAME_MAX + 1 bytes, "" by default */
} MtdppParamType;

/* which kinds a key applies to */
typedef enum MtdppKeyReach
{
	MTDPP_KEY_LISTED = 0,		/* the kind that defines it and those that list it */
	MTDPP_KEY_EVERY_KIND,		/* every kind */
	MTDPP_KEY_ACCEPTED			/* those that list it; the others accept it and ignore it */
} MtdppKeyReach;

/* A hyperparameter key: params.c's table and each kind's own keys. */
typedef struct MtdppParamKey
{
	const char *name;
	MtdppParamType type;
	size_t		offset;			/* of the field in MtdppParams; of a kind's own key,
								 * in the kind's struct (MTDPP_KIND_FIELD) */
	double		value;			/* default (for MTDPP_PARAM_LOG, the value itself) */
	double		lo,
				hi;				/* range, for numbers */
	const char *const *choices; /* MTDPP_PARAM_CHOICE: names, NULL-terminated;
								 * NULL for the kind, named by kinds.c */
	const char *expect;			/* what an error says a valid value is */
	bool		stored;			/* written into the model's hyperparams */
	const char *description;
	bool		unless_default; /* stored only when not its default (fits) */
	MtdppKeyReach reach;
} MtdppParamKey;

/*
 * The keys the kinds share, by what uses them, for the lists of keys each
 * kind takes (MtdppKindRoutine.keys): those of the stochastic gradient
 * (fit/), of the validation slice and of a warm start.
 */
#define MTDPP_SGD_KEYS "rank", "epochs", "learning_rate", "lr_decay", "batch_size", \
	"negatives", "positives", "patience", "l2", "l2_bias", "w", "init_scale", \
	"optimizer", "momentum", "epoch_baskets", "loss", "negative_power"
#define MTDPP_VALIDATION_KEYS "validation_fraction", "validation_baskets", \
	"validation_candidates", "max_context"
#define MTDPP_WARM_KEYS "warm_start", "warm_learning_rate", "warm_epochs", \
	"warm_patience", "warm_old_baskets"

/* A hyperparameter whose default differs for a kind (params.c's keys). */
typedef struct MtdppKindDefault
{
	const char *key;
	double		value;
} MtdppKindDefault;

/* params.c */
extern void mtdpp_params_defaults(MtdppParams *p, MtdppKind kind);
extern bool mtdpp_kind_takes(MtdppKind kind, const char *name);
extern int	mtdpp_param_int(const MtdppParams *p, const char *name);
extern void mtdpp_params_parse(MtdppParams *p, Jsonb *json);
extern void mtdpp_params_resolve(MtdppParams *p, Jsonb *json);
extern void mtdpp_params_for_data(MtdppParams *p, int n_items);
extern bool mtdpp_param_given(const MtdppParams *p, const char *name);
extern char *mtdpp_params_to_json(const MtdppParams *p);
extern char *mtdpp_params_json_beyond(const MtdppParams *p, MtdppKind beside);

/* warm_start.c: the model a warm start starts from, its settings resolved into P */
extern const MtdppModel *mtdpp_warm_start(MtdppParams *p);

/*
 * fit/params_capacity.c: the rank and L2 of the kinds fitted by the stochastic
 * gradient, chosen on the validation slice when neither is given (rank
 * MTDPP_RANK_CHOSEN)
 */
#define MTDPP_RANK_CHOSEN		(-1)
#define MTDPP_CAPACITY_LOW_RANK	32	/* the smaller rank the choice tries, */
#define MTDPP_CAPACITY_LOW_L2	1e-5	/* with this L2: the defaults until 0.3.0 */
#define MTDPP_CAPACITY_MAX_RANK	128 /* the larger rank the choice tries */
#define MTDPP_CAPACITY_FLOOR_RANK 8 /* the least it falls back to, where the smaller does not fit */
extern const MtdppKindDefault mtdpp_capacity_defaults[];
extern void mtdpp_capacity_resolve(MtdppParams *p);
extern int	mtdpp_capacity_max_rank(const MtdppParams *p);
extern bool mtdpp_capacity_large_fits(const MtdppParams *p, int n_items);
extern int	mtdpp_capacity_value_rank(const MtdppParams *p, int n_items);

#endif							/* MTDPP_PARAMS_H */
