/*
 * fit/progress.c
 *		What each training of the server is doing, readable from any
 *		session: the view mtdpp_progress, as pg_stat_progress_create_index
 *		shows an index build.
 *
 * PostgreSQL keeps a backend's progress in its PgBackendStatus, for the
 * commands it knows; an extension cannot add a command there, so mtdpp
 * keeps its own table in the fixed shared memory, one slot per backend
 * (indexed by the backend's number, as the backend status array is).  Only a
 * library in shared_preload_libraries can reserve it (shmem_request_hook),
 * as for the shared models (shared_models.c); without that, nothing is
 * reported and the view says why in a NOTICE.
 *
 * A slot is written by its backend only, once per phase and once per
 * epoch, never in the per-example loops: the cost of the reporting is a
 * few stores and two barriers per epoch.  Readers copy a slot under the
 * changecount protocol of st_changecount (odd while a write is under way;
 * a reader retries until it reads the same even count before and after),
 * so a writer never waits.
 *
 * A training begins its slot when it starts reading (mtdpp_train, or the
 * first row of mtdpp_fit called directly) and ends it when it has stored
 * or returned its model.  Nothing may outlive it: a cancel or an error
 * aborts the transaction (or the subtransaction the training began in),
 * whose callback clears the slot; a backend that exits clears it in
 * before_shmem_exit; a backend that crashes makes the postmaster
 * reinitialise shared memory, and with it every slot.  Parallel workers
 * report nothing: their leader's slot is the training's.
 *
 * Who sees what follows the statistics views: every role sees the pid and
 * database of a training, and its details only if it may see the
 * session's in pg_stat_activity (a member of pg_read_all_stats, or of the
 * role the session was started as).
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "fit/progress.h"
#include "model/model.h"
#include "pg_compat.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

PG_FUNCTION_INFO_V1(mtdpp_progress_info);
PG_FUNCTION_INFO_V1(mtdpp_progress_available);

#define KIND_MAX	32

typedef struct ProgressSlot
{
	uint32		changecount;	/* odd while the backend writes */
	int			pid;			/* 0: no training */
	Oid			db;
	Oid			user;			/* the session's role, as pg_stat_activity's */
	MtdppPhase	phase;
	int32		rank;
	int32		epoch;			/* epochs done in the current fit */
	int32		max_epochs;
	int16		fit;			/* an ensemble's fit in training, from 1 */
	int16		fits;			/* its fits, 0 or 1: no ensemble */
	double		validation;		/* MPR after the last epoch, NaN if none */
	int64		lines;			/* -1 until the lines are gathered */
	int32		baskets;
	int32		items;
	TimestampTz started;
	TimestampTz fit_started;	/* the current fit's epochs */
	TimestampTz epoch_ended;
	char		model[MTDPP_NAME_MAX + 1];	/* "" when mtdpp_fit is called directly */
	char		kind[KIND_MAX];
} ProgressSlot;

static ProgressSlot *slots = NULL;	/* MaxBackends of them, when preloaded */
static ProgressSlot *mine = NULL;	/* this backend's, while it trains */
static int	mine_level = 0;		/* the transaction nesting level it began at */
static bool mine_named = false; /* begun by mtdpp_train, which ends it */
static bool callbacks_registered = false;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static const char *const phase_names[] = {
	[MTDPP_PHASE_GATHERING] = "gathering lines",
	[MTDPP_PHASE_BASKETS] = "building baskets",
	[MTDPP_PHASE_CHOOSING_RANK] = "choosing the rank",
	[MTDPP_PHASE_EPOCHS] = "training epochs",
	[MTDPP_PHASE_WEIGHTS] = "choosing weights",
	[MTDPP_PHASE_EVIDENCE] = "building the evidence",
	[MTDPP_PHASE_SAVING] = "saving",
};

static inline void
write_begin(void)
{
	mine->changecount++;
	pg_write_barrier();
}

static inline void
write_end(void)
{
	pg_write_barrier();
	mine->changecount++;
}

static Size
slots_size(void)
{
	return mul_size(MaxBackends, sizeof(ProgressSlot));
}

static void
progress_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(slots_size());
}

static void
progress_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	slots = ShmemInitStruct("mtdpp progress", slots_size(), &found);
	if (!found)
		memset(slots, 0, slots_size());
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init: the table of slots, when preloaded. */
void
mtdpp_progress_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = progress_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = progress_shmem_startup;
}

static void
clear_mine(void)
{
	if (mine == NULL)
		return;
	write_begin();
	mine->pid = 0;
	write_end();
	mine = NULL;
}

static void
progress_xact(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		clear_mine();
}

/* a training that began in a subtransaction ends with it */
static void
progress_subxact(SubXactEvent event, SubTransactionId sub, SubTransactionId parent, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && mine != NULL &&
		mine_level >= GetCurrentTransactionNestLevel())
		clear_mine();
}

static void
progress_exit(int code, Datum arg)
{
	clear_mine();
}

/*
 * Begins this backend's report of a training of MODEL (NULL: mtdpp_fit
 * called directly, no name).  Returns whether it began one: false in a
 * parallel worker, without the table, or when a training of this backend
 * reports already (mtdpp_train runs the aggregate, whose rows begin too).
 * mtdpp_train ends its own; the aggregate's final function ends the others
 * (mtdpp_progress_end_fit), whichever of its rows or itself began them:
 * in a parallel plan the leader's rows and its final function see
 * different states.
 */
bool
mtdpp_progress_begin(const char *model)
{
	ProgressSlot *s;
	TimestampTz now;

	if (slots == NULL || mine != NULL || IsParallelWorker() ||
		MTDPP_MY_BACKEND_SLOT < 0 || MTDPP_MY_BACKEND_SLOT >= MaxBackends)
		return false;
	if (!callbacks_registered)
	{
		RegisterXactCallback(progress_xact, NULL);
		RegisterSubXactCallback(progress_subxact, NULL);
		before_shmem_exit(progress_exit, 0);
		callbacks_registered = true;
	}
	now = GetCurrentTimestamp();
	mine = s = &slots[MTDPP_MY_BACKEND_SLOT];
	mine_level = GetCurrentTransactionNestLevel();
	mine_named = model != NULL;
	write_begin();
	s->pid = MyProcPid;
	s->db = MyDatabaseId;
	s->user = GetSessionUserId();
	s->phase = MTDPP_PHASE_GATHERING;
	s->rank = s->epoch = s->max_epochs = 0;
	s->fit = s->fits = 0;
	s->validation = NAN;
	s->lines = -1;
	s->baskets = s->items = 0;
	s->started = s->fit_started = s->epoch_ended = now;
	strlcpy(s->model, model ? model : "", sizeof(s->model));
	s->kind[0] = '\0';
	write_end();
	return true;
}

void
mtdpp_progress_end(void)
{
	clear_mine();
}

/*
 * The end of mtdpp_fit's final function: the end of a training begun by
 * the aggregate's rows (called directly), not of one mtdpp_train began and
 * still has to store.
 */
void
mtdpp_progress_end_fit(void)
{
	if (!mine_named)
		clear_mine();
}

void
mtdpp_progress_kind(const char *kind)
{
	if (mine == NULL)
		return;
	write_begin();
	strlcpy(mine->kind, kind, sizeof(mine->kind));
	write_end();
}

void
mtdpp_progress_phase(MtdppPhase phase)
{
	if (mine == NULL)
		return;
	write_begin();
	mine->phase = phase;
	write_end();
}

void
mtdpp_progress_data(int64 lines, int baskets, int items)
{
	if (mine == NULL)
		return;
	write_begin();
	mine->lines = lines;
	mine->baskets = baskets;
	mine->items = items;
	write_end();
}

/* fit FIT of an ensemble of FITS begins (fit_ensemble.c); the phase says so */
void
mtdpp_progress_ensemble(int fit, int fits)
{
	if (mine == NULL)
		return;
	write_begin();
	mine->fit = fit;
	mine->fits = fits;
	write_end();
}

/* a fit at RANK begins its epochs, at most MAX_EPOCHS */
void
mtdpp_progress_fit(int rank, int max_epochs)
{
	TimestampTz now;

	if (mine == NULL)
		return;
	now = GetCurrentTimestamp();
	write_begin();
	mine->rank = rank;
	mine->epoch = 0;
	mine->max_epochs = max_epochs;
	mine->validation = NAN;
	mine->fit_started = mine->epoch_ended = now;
	write_end();
}

/* EPOCH epochs are done; the last reached VALIDATION (NaN: no slice) */
void
mtdpp_progress_epoch(int epoch, double validation)
{
	TimestampTz now;

	if (mine == NULL)
		return;
	now = GetCurrentTimestamp();
	write_begin();
	mine->epoch = epoch;
	mine->validation = validation;
	mine->epoch_ended = now;
	write_end();
}

/* A consistent copy of slot S, written by another backend. */
static void
read_slot(volatile ProgressSlot *s, ProgressSlot *copy)
{
	for (;;)
	{
		uint32		before = s->changecount;
		uint32		after;

		pg_read_barrier();
		memcpy(copy, (ProgressSlot *) s, sizeof(ProgressSlot));
		pg_read_barrier();
		after = s->changecount;
		if (before == after && (before & 1) == 0)
			return;
		CHECK_FOR_INTERRUPTS();
	}
}

static bool
may_see(Oid user)
{
	return has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) ||
		has_privs_of_role(GetUserId(), user);
}

static double
seconds_between(TimestampTz from, TimestampTz to)
{
	return (double) (to - from) / USECS_PER_SEC;
}

#define N_COLUMNS 15

/* the row of a training; its details only for a role that may see them */
static void
slot_row(const ProgressSlot *s, TimestampTz now, Datum *values, bool *nulls)
{
	bool		epochs = s->phase == MTDPP_PHASE_CHOOSING_RANK || s->phase == MTDPP_PHASE_EPOCHS;

	memset(nulls, 0, sizeof(bool) * N_COLUMNS);
	values[0] = Int32GetDatum(s->pid);
	values[1] = ObjectIdGetDatum(s->db);
	if (!may_see(s->user))
	{
		for (int c = 2; c < N_COLUMNS; c++)
			nulls[c] = true;
		return;
	}
	values[2] = CStringGetTextDatum(s->model);
	nulls[2] = s->model[0] == '\0';
	values[3] = CStringGetTextDatum(s->kind);
	nulls[3] = s->kind[0] == '\0';
	values[4] = CStringGetTextDatum(s->phase >= MTDPP_PHASE_GATHERING && s->phase <= MTDPP_PHASE_SAVING ?
									phase_names[s->phase] : "unknown");
	/* the epochs of an ensemble: which of its fits */
	if (epochs && s->fits > 1)
		values[4] = CStringGetTextDatum(psprintf("%s, fit %d of %d", phase_names[s->phase],
												 s->fit, s->fits));
	values[5] = Int32GetDatum(s->rank);
	values[6] = Int32GetDatum(s->epoch);
	values[7] = Int32GetDatum(s->max_epochs);
	nulls[5] = nulls[6] = nulls[7] = !epochs;
	values[8] = Float8GetDatum(s->validation);
	nulls[8] = !epochs || isnan(s->validation);
	values[9] = Int64GetDatum(s->lines);
	values[10] = Int32GetDatum(s->baskets);
	values[11] = Int32GetDatum(s->items);
	nulls[9] = nulls[10] = nulls[11] = s->lines < 0;
	values[12] = Float8GetDatum(seconds_between(s->started, now));
	/* the rest of this fit's epochs at the pace so far: patience may end it sooner */
	nulls[13] = !epochs || s->epoch < 1;
	if (!nulls[13])
	{
		double		per_epoch = seconds_between(s->fit_started, s->epoch_ended) / s->epoch;
		double		left = per_epoch * (s->max_epochs - s->epoch) -
			seconds_between(s->epoch_ended, now);

		values[13] = Float8GetDatum(Max(left, 0.0));
	}
	values[14] = TimestampTzGetDatum(s->started);
}

/* mtdpp_progress_info(): a row per training of the server (the view's rows) */
Datum
mtdpp_progress_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz now = GetCurrentTimestamp();

	InitMaterializedSRF(fcinfo, 0);
	if (slots == NULL)
	{
		ereport(NOTICE,
				(errmsg("mtdpp is not in shared_preload_libraries: trainings are not reported"),
				 errhint("Add mtdpp to shared_preload_libraries and restart the server to see them in mtdpp_progress.")));
		return (Datum) 0;
	}
	for (int b = 0; b < MaxBackends; b++)
	{
		ProgressSlot copy;
		Datum		values[N_COLUMNS];
		bool		nulls[N_COLUMNS];

		if (slots[b].pid == 0)
			continue;
		read_slot(&slots[b], &copy);
		if (copy.pid == 0)
			continue;
		slot_row(&copy, now, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* whether this server reports trainings (mtdpp preloaded) */
Datum
mtdpp_progress_available(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(slots != NULL);
}
