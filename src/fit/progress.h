/*
 * fit/progress.h
 *		What each training of the server is doing, for the view
 *		mtdpp_progress (progress.c).
 */
#ifndef MTDPP_PROGRESS_H
#define MTDPP_PROGRESS_H

/* the phases of a training, in the order they come; the view names them */
typedef enum MtdppPhase
{
	MTDPP_PHASE_GATHERING = 1,	/* reading the source's order lines */
	MTDPP_PHASE_BASKETS,		/* sorting the lines into baskets */
	MTDPP_PHASE_CHOOSING_RANK,	/* the epochs of a candidate rank (fit.c) */
	MTDPP_PHASE_EPOCHS,			/* the epochs at the rank given */
	MTDPP_PHASE_WEIGHTS,		/* the weight of the evidence, where a kind weighs it */
	MTDPP_PHASE_EVIDENCE,		/* co-occurrence lists, EASE weights, counts */
	MTDPP_PHASE_SAVING			/* checking and storing the model */
} MtdppPhase;

extern void mtdpp_progress_init(void);
extern bool mtdpp_progress_begin(const char *model);
extern void mtdpp_progress_end(void);
extern void mtdpp_progress_end_fit(void);
extern void mtdpp_progress_kind(const char *kind);
extern void mtdpp_progress_phase(MtdppPhase phase);
extern void mtdpp_progress_data(int64 lines, int baskets, int items);
extern void mtdpp_progress_ensemble(int fit, int fits);
extern void mtdpp_progress_fit(int rank, int max_epochs);
extern void mtdpp_progress_epoch(int epoch, double validation);

#endif							/* MTDPP_PROGRESS_H */
