/*
 * fit/fit_int.h
 *		What the files of the DPP fit share: the trainer, its shards and
 *		the routines one file of the family calls in another.
 *
 * The fit of the DPP kinds is a family of files: fit.c (its entry and the
 * choice of rank), fit_epochs.c (the trainer's set-up and the epoch loop),
 * fit_examples.c (example sampling), fit_loss.c (loss and gradients, and
 * mtdpp.gradient_check), fit_update.c (the optimiser's updates) and
 * fit_bilinear.c (bilinear scores, a factorization machine's, and their gradients).
 */
#ifndef MTDPP_FIT_INT_H
#define MTDPP_FIT_INT_H

#include "common/pg_prng.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "model/baskets.h"
#include "model/model.h"
#include "numeric/helper_thread.h"

/* one positive example: basket and position of the target inside it */
typedef struct Positive
{
	int32		basket;
	int32		pos;
} Positive;

/*
 * Each minibatch is split into TRAIN_SHARDS shards, which turn their
 * examples into gradients of their own, summed in shard order before the
 * update: on one thread or two, the same model comes out.
 */
#define TRAIN_SHARDS 2

struct Trainer;

/* one shard of a minibatch: its examples, scratch and gradients */
typedef struct Shard
{
	struct Trainer *tr;
	pg_prng_state rng;			/* reseeded per example */

	/* this minibatch's positives, and what they gave */
	int64		first,
				last;
	double		scale;
	double		loss;
	int64		n_ex;
	int64		n_singular;		/* examples whose kernel was not positive definite */

	/* gradients and the rows they touch */
	double	   *gV,
			   *gR,
			   *gD;
	bool	   *touchedV,
			   *touchedR;
	int32	   *listV,
			   *listR;
	int			nV,
				nR;

	/* scratch for one context */
	int32	   *ctx;
	int32	   *set;			/* a basket, while its negatives are built */
	int32	   *targets;
	double	   *labels;
	double	   *VC,				/* the context's rows of V, b x r */
			   *GVC;			/* their gradient */
	double	   *logdet,		/* per target of the context */
			   *g;
	double	   *P,
			   *R2rows,
			   *packed,
			   *K,
			   *M;
} Shard;

typedef struct Trainer
{
	const MtdppParams *p;
	MtdppBaskets *data;
	MtdppModel *m;
	pg_prng_state rng;
	bool		bias;			/* D is trained */
	bool		task_factors;	/* R is trained (multi-task kinds) */
	bool		likelihood;		/* loss is -ln det (low-rank DPP), not logistic */
	bool		bilinear;		/* scores are bilinear, a factorization machine's (fit_bilinear.c) */
	bool		targeted;		/* examples are targets against the rest of a basket */
	double		mean_pop;
	int			warm_items;		/* items that took a warm start's parameters */

	Shard	   *shards[TRAIN_SHARDS];	/* each in memory of its own */
	MtdppHelper *helper;		/* a second thread, or NULL */
	Positive   *pool;			/* room for an epoch's positives */
	int64		n_pool;
	double		basket_share;	/* share of the training baskets an epoch samples */
	int			first_new;		/* a warm start's first basket its model never saw */
	double		old_share;		/* and the share of older ones an epoch samples */
	const Positive *positives;	/* this epoch's, shuffled */
	uint64		epoch_seed;		/* example k draws from epoch_seed + k */

	/* optimiser state */
	double	   *mV,
			   *vV,
			   *mR,
			   *vR,
			   *mD,
			   *vD;
	int64		step;
	double		adam_correction;
	double	   *neg_cdf;		/* negatives by popularity^power: cumulative */
	double	   *neg_logq;		/* and ln(n q_i), NULL when uniform */

	/* best parameters so far */
	double	   *bestV,
			   *bestR,
			   *bestD;

	/* low-rank normaliser: r x r and n x r */
	double	   *G,
			   *VG;

	MtdppValidation val;		/* the slice early stopping measures */
	double		to_beat;		/* a rival's validation MPR, or NAN (fit.c) */
} Trainer;

/*
 * The routines below are the family's own: hidden from the other libraries
 * a backend loads, whatever their names.
 */
#pragma GCC visibility push(hidden)

/* fit_epochs.c (the last four for bayes_sgld.c too) */
extern double gaussian(pg_prng_state *rng);
extern Shard *shard_new(Trainer *tr, int max_len, int nt_max, int max_ctx);
extern Size training_memory(const MtdppBaskets *d, const MtdppParams *p);
extern void trainer_setup(Trainer *tr, MtdppBaskets *data, const MtdppParams *p,
						  const MtdppValidation *given);
extern void run_minibatch(Trainer *tr, int64 first, int64 last, double scale);

/* fit_loss.c */
extern void touch_row(bool *flags, int32 *list, int *n, int row);
extern double context_step(Shard *sh, int b, int nt, double scale);
extern bool targets_loss(Shard *sh, int nt, double *loss);
extern double lowrank_normaliser(Trainer *tr, double weight);

/* fit_bilinear.c */
extern double bilinear_context_step(Shard *sh, int b, int nt, double scale);

/* fit_update.c */
extern void run_pair(Trainer *tr, void (*fn) (void *), void *a, void *b);
extern void apply_updates(Trainer *tr, double lr);
extern void merge_shards(Trainer *tr);

/* fit_examples.c */
extern int build_context(Shard *sh, Positive pos);
extern double targeted_examples(Shard *sh, Positive pos, double scale, int64 *n_ex);
extern double single_kernel_examples(Shard *sh, Positive pos, double scale, int64 *n_ex);
extern double epoch_share(const MtdppParams *p, int64 n_train);
extern int64 sampled_pool(int64 lines, double share, int max_len);
extern void warm_budget(Trainer *tr, int64 n_train, int64 *old_lines);
extern int64 epoch_positives(Trainer *tr);

#pragma GCC visibility pop

#endif							/* MTDPP_FIT_INT_H */
