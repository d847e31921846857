/*
 * train/handoff.c
 *		The model mtdpp_train trains, handed from the final function of
 *		mtdpp_fit to storage in memory rather than as a value.
 *
 * mtdpp_fit returns its model as a bytea, which holds at most 1 GB
 * (MaxAllocSize).  mtdpp_train runs the aggregate through SPI and stores
 * the model row by row (store.c), so that value is only its way out of the
 * SPI call: here the final function of the one aggregate mtdpp_train runs
 * leaves the model in a memory context that outlives the call (moved under
 * the context mtdpp_train runs in) and returns a small marker naming it,
 * by which mtdpp_train takes the model back.  No value is built, so no
 * model that mtdpp_train stores is bounded by a bytea's gigabyte, and the
 * model is never held twice.
 *
 * The aggregate is recognised as the top plan node of the query whose text
 * mtdpp_train runs: the aggregate of a serial plan, the Finalize Aggregate
 * of a parallel one, the aggregate that combines the shards' partial states
 * on a Citus coordinator.  Anything else (an mtdpp_fit inside a view the
 * source names, or inside a function it calls, a query pushed whole to a
 * Citus worker) returns its value as ever, which mtdpp_train reads as
 * before, within the bytea's limit.  A handoff is armed for one query at a
 * time, and disarmed when that query ends, however it ends.
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/memutils.h"

#include "model/model.h"
#include "train/train.h"

#define HANDOFF_MAGIC	0x4d44484f	/* "MDHO" */

/* what the final function returns in place of the model's value */
typedef struct HandoffMarker
{
	int32		vl_len_;
	uint32		magic;
	uint32		unused;
	uint64		serial;
} HandoffMarker;

struct MtdppHandoff
{
	const char *query;			/* the text of the query that runs the aggregate */
	MemoryContext owner;		/* where the model is moved to */
	uint64		serial;
	MtdppModel *model;			/* once handed over */
	MemoryContext holder;		/* its context, under OWNER */
	struct MtdppHandoff *prev;	/* an outer training's (a source that trains) */
};

static MtdppHandoff *armed = NULL;
static uint64 next_serial = 1;

/*
 * Arms a handoff for QUERY, the text of the query mtdpp_train is about to
 * run, the model to be moved under memory context OWNER (where the handoff
 * lives too).
 */
MtdppHandoff *
mtdpp_handoff_arm(const char *query, MemoryContext owner)
{
	MtdppHandoff *h = MemoryContextAllocZero(owner, sizeof(MtdppHandoff));

	h->query = query;
	h->owner = owner;
	h->serial = next_serial++;
	h->prev = armed;
	armed = h;
	return h;
}

/* Disarms H, once its query has ended (or failed): its model, if any, stays. */
void
mtdpp_handoff_disarm(MtdppHandoff *h)
{
	if (armed == h)
		armed = h->prev;
}

/*
 * Whether the final function called through FCINFO is that of the
 * aggregate an armed handoff waits for, whose model it then hands over.
 */
bool
mtdpp_handoff_wanted(FunctionCallInfo fcinfo)
{
	AggState   *agg;
	EState	   *estate;

	if (armed == NULL || armed->model != NULL ||
		fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return false;
	agg = (AggState *) fcinfo->context;
	estate = agg->ss.ps.state;
	return estate != NULL && estate->es_plannedstmt != NULL &&
		estate->es_plannedstmt->planTree == agg->ss.ps.plan &&
		estate->es_sourceText != NULL && strcmp(estate->es_sourceText, armed->query) == 0;
}

/*
 * Hands model M, all of whose memory is in context HOLDER, to the armed
 * handoff (mtdpp_handoff_wanted said so): HOLDER moves under the context
 * of mtdpp_train.  Returns the marker the final function returns instead
 * of the model's value, in the current memory context.
 */
bytea *
mtdpp_handoff_give(MtdppModel *m, MemoryContext holder)
{
	HandoffMarker *marker = palloc0(sizeof(HandoffMarker));

	Assert(armed != NULL && armed->model == NULL);
	elog(DEBUG1, "mtdpp_fit hands a model of %d items at rank %d to mtdpp_train in memory",
		 m->n_items, m->rank);
	MemoryContextSetParent(holder, armed->owner);
	armed->model = m;
	armed->holder = holder;
	marker->magic = HANDOFF_MAGIC;
	marker->serial = armed->serial;
	SET_VARSIZE(marker, sizeof(HandoffMarker));
	return (bytea *) marker;
}

/*
 * The model handed to H, if VALUE, what the aggregate returned, is H's
 * marker; its context into *HOLDER.  NULL if VALUE is a model's value.
 */
MtdppModel *
mtdpp_handoff_take(MtdppHandoff *h, bytea *value, MemoryContext *holder)
{
	HandoffMarker marker;

	if (VARSIZE_ANY_EXHDR(value) != sizeof(HandoffMarker) - VARHDRSZ)
		return NULL;
	memcpy((char *) &marker + VARHDRSZ, VARDATA_ANY(value), sizeof(HandoffMarker) - VARHDRSZ);
	if (marker.magic != HANDOFF_MAGIC)
		return NULL;
	if (marker.serial != h->serial || h->model == NULL)
		elog(ERROR, "mtdpp_fit handed over model %llu, not the one this training waits for",
			 (unsigned long long) marker.serial);
	*holder = h->holder;
	return h->model;
}
