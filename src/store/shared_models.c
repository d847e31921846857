/*
 * store/shared_models.c
 *		One copy of a model per server: the models of the model cache
 *		(cache.c) placed in dynamic shared memory, mapped by every backend.
 *
 * Without this file each backend that completes reads the model from the
 * tables into its own memory: 9 MB for a 16,000-item model at rank 64, so
 * 900 MB for 100 connections.  With mtdpp in shared_preload_libraries, the
 * first backend that reads a model copies it, laid out exactly as the
 * scorer reads it (the arrays of MtdppModel, R^2 in panels), into a dynamic
 * shared memory segment of its own; every other backend that needs the same
 * model maps that segment and points the arrays of a small MtdppModel at
 * the mapping.  Nothing is copied per backend, and the scorer reads the
 * shared pages in place.
 *
 * Why preloading: a backend that has a segment to share must tell the
 * others its handle, and PostgreSQL 15 offers extensions no place in shared
 * memory but the fixed one set up at server start, which only a library in
 * shared_preload_libraries can reserve (shmem_request_hook) and initialise
 * (shmem_startup_hook).  That fixed part is small: a table of slots, one
 * per shared model, its lock and a condition variable.  A library loaded
 * by a backend on first use has none of it, and then every backend keeps
 * its own copy, as before.  mtdpp.shared_cache_size caps the bytes of all
 * segments (0 turns sharing off); a model that does not fit, or finds no
 * free slot, stays a backend's own copy: sharing never fails a query.
 *
 * What is shared is named by what was read.  A slot's key is the model's
 * database and model_id, the xmin of the row of mtdpp.models it was read
 * from, and the (item_id, xmin) of every row of mtdpp.items it was read
 * from (kept in the segment; the slot has their hash).  A committed row
 * version never changes (an UPDATE writes a new version with a new xmin),
 * and a committed transaction leaves at most one version of a row that
 * other transactions can see, so equal keys mean the same rows, hence the
 * same model: a backend shares a segment exactly when its own snapshot
 * sees the rows the segment was built from, whatever happened between the
 * two reads, on a primary, a standby (which replays the same xmins) or a
 * logical replica (whose apply worker writes rows of its own).  The rows a
 * backend's own transaction wrote (xmin its own) are not committed, may
 * change again with the same xmin, and are never shared.  So a shared
 * segment needs no invalidation: the key of what a snapshot sees moves on
 * whenever the rows change, and cache.c's invalidations decide, as before,
 * when a backend looks its model up again.
 *
 * Lifetime.  A slot counts the backends whose cache holds it (a backend
 * maps a segment once, whatever number of its cache entries use it); its
 * segment is pinned (dsm_pin_segment) until that count falls to zero, which
 * frees it.  A backend lets go when its cache entry is freed (cache.c frees
 * it once no call uses it: the entry's pins are the calls in progress), and
 * on exit (before_shmem_exit).  A backend that crashes takes the postmaster
 * through a crash restart, which destroys every segment and initialises the
 * slot table again: nothing outlives it.  While one backend reads a model
 * into a new slot, the others that want it wait for it (at most
 * SHARED_WAIT_MS, then read it themselves, so that a lock the reader waits
 * for cannot make them wait for ever).
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "model/kinds.h"
#include "model/model.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "store/shared_models_int.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_shared_models);

#define SHARED_SLOTS	64		/* models shared at once, at most */
#define SHARED_WAIT_MS	5000	/* longest wait for another backend's read */

typedef enum SlotState
{
	SLOT_FREE = 0,
	SLOT_BUILDING,				/* a backend reads the model into it */
	SLOT_READY
} SlotState;

typedef struct SharedSlot
{
	SlotState	state;
	uint64		serial;			/* new for every use of the slot */
	Oid			db;
	int32		model_id;
	TransactionId xmin;			/* of the model's row of mtdpp.models */
	int32		n_items;
	int32		rank;
	uint64		hash;			/* of the (item_id, xmin) of its items */
	dsm_handle	handle;
	Size		bytes;			/* of the segment (BUILDING: reserved) */
	int			backends;		/* backends that map it */
	int			builder;		/* pid of the backend reading it */
} SharedSlot;

typedef struct SharedControl
{
	LWLock	   *lock;
	ConditionVariable changed;	/* a slot left the BUILDING state */
	Size		bytes;			/* of every slot */
	uint64		next_serial;
	SharedSlot	slots[SHARED_SLOTS];
} SharedControl;


/*
 * This backend's hold on a slot: the mapping of its segment and the model
 * that points into it, used by USERS entries of the cache.  A claim (a slot
 * this backend is reading) has no segment yet.
 */
typedef struct Attachment
{
	struct Attachment *next;
	int			slot;
	uint64		serial;
	dsm_segment *seg;
	MtdppModel	model;
	int			users;
	bool		released;		/* let go of the slot already */
} Attachment;

struct MtdppSharedClaim
{
	Attachment *att;
	MtdppSharedKey key;
};

static int	shared_cache_size = 1024;	/* MB */
static SharedControl *ctl = NULL;
static Attachment *attachments = NULL;
static bool exit_registered = false;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
shared_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(SharedControl));
	RequestNamedLWLockTranche("mtdpp", 1);
}

static void
shared_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ctl = ShmemInitStruct("mtdpp shared models", sizeof(SharedControl), &found);
	if (!found)
	{
		memset(ctl, 0, sizeof(SharedControl));
		ctl->lock = &(GetNamedLWLockTranche("mtdpp"))->lock;
		ConditionVariableInit(&ctl->changed);
		ctl->next_serial = 1;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init: the setting, and the shared part when preloaded. */
void
mtdpp_shared_init(void)
{
	DefineCustomIntVariable("mtdpp.shared_cache_size",
							"Bytes of shared memory the models every backend shares may take.",
							"Needs mtdpp in shared_preload_libraries; 0 keeps a copy per backend.",
							&shared_cache_size, 1024, 0, INT_MAX, PGC_SIGHUP,
							GUC_UNIT_MB, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shared_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shared_shmem_startup;
}

/* Whether models are shared in this backend now. */
bool
mtdpp_shared_enabled(void)
{
	return ctl != NULL && shared_cache_size > 0;
}

static Size
budget_bytes(void)
{
	return (Size) shared_cache_size * 1024 * 1024;
}

static bool
key_matches(const SharedSlot *s, const MtdppSharedKey *key)
{
	return s->state != SLOT_FREE && s->db == key->db && s->model_id == key->model_id &&
		s->xmin == key->xmin && s->n_items == key->n_items && s->hash == key->hash;
}

/*
 * Lets go of slot A holds: frees it when A was the last backend to map it,
 * or gives it up if A was reading it.  Then unmaps the segment.
 */
static void
attachment_release(Attachment *a)
{
	SharedSlot *s;
	bool		unpin = false;
	bool		wake = false;
	dsm_handle	handle = 0;

	if (a->released)
		return;
	a->released = true;
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	s = &ctl->slots[a->slot];
	if (s->serial == a->serial && s->state != SLOT_FREE)
	{
		if (s->state == SLOT_BUILDING)
			wake = true;
		else if (--s->backends == 0)
		{
			unpin = true;
			handle = s->handle;
		}
		if (wake || unpin)
		{
			ctl->bytes -= s->bytes;
			s->state = SLOT_FREE;
		}
	}
	LWLockRelease(ctl->lock);
	if (wake)
		ConditionVariableBroadcast(&ctl->changed);
	if (unpin)
		dsm_unpin_segment(handle);
	if (a->seg != NULL)
		dsm_detach(a->seg);
	a->seg = NULL;
}

/* A cache entry's memory is freed: it no longer uses its attachment. */
static void
attachment_unuse(void *arg)
{
	Attachment *a = (Attachment *) arg;
	Attachment **link;

	if (--a->users > 0)
		return;
	attachment_release(a);
	for (link = &attachments; *link != NULL; link = &(*link)->next)
		if (*link == a)
		{
			*link = a->next;
			break;
		}
	pfree(a);
}

/* Backend exit: every slot this backend holds is let go of. */
static void
shared_exit(int code, Datum arg)
{
	for (Attachment *a = attachments; a != NULL; a = a->next)
		attachment_release(a);
}

/*
 * Makes A, allocated beforehand, this backend's attachment to slot SLOT,
 * used by the entry whose memory is OWNER (CB, allocated there, lets go of
 * it when OWNER is freed).  Nothing here can fail: a slot that counts this
 * backend is always in its list.
 */
static void
attachment_add(Attachment *a, MemoryContextCallback *cb, int slot, uint64 serial,
			   MemoryContext owner)
{
	a->slot = slot;
	a->serial = serial;
	a->users = 1;
	a->next = attachments;
	attachments = a;
	cb->func = attachment_unuse;
	cb->arg = a;
	MemoryContextRegisterResetCallback(owner, cb);
}

/* One more entry, whose memory is OWNER, uses attachment A. */
static MtdppModel *
attachment_use(Attachment *a, MemoryContextCallback *cb, MemoryContext owner)
{
	a->users++;
	cb->func = attachment_unuse;
	cb->arg = a;
	MemoryContextRegisterResetCallback(owner, cb);
	return &a->model;
}

/*
 * Maps the segment of A's slot, which this backend has just been counted
 * in; NULL (and the slot let go of) if it does not hold KEY's rows after
 * all (a collision of hashes).
 */
static MtdppModel *
attach_ready(Attachment *a, dsm_handle handle, const MtdppSharedKey *key)
{
	SegmentHeader *h;

	a->seg = dsm_attach(handle);
	if (a->seg == NULL)
		elog(ERROR, "could not map the shared segment of model %d", key->model_id);
	dsm_pin_mapping(a->seg);
	h = (SegmentHeader *) dsm_segment_address(a->seg);
	if (h->magic != SHARED_MAGIC || h->n_items != key->n_items ||
		memcmp((char *) h + h->versions, key->versions,
			   sizeof(MtdppItemVersion) * key->n_items) != 0)
	{
		attachment_release(a);
		return NULL;
	}
	mtdpp_segment_point(&a->model, (char *) h);
	return &a->model;
}

/* An estimate of a slot's bytes (exact but for item-kNN's neighbours). */
static Size
estimated_bytes(const MtdppSharedKey *key)
{
	SegmentHeader h = {0};

	/* a scan order where the model may keep one */
	h.scan = key->n_items >= MTDPP_SCAN_MIN_ITEMS && key->rank > 0;
	mtdpp_segment_layout(&h, key->n_items, key->rank, 0, false);
	return h.total;
}

/*
 * The shared copy of the model KEY names, for the cache entry whose memory
 * is OWNER (it stays mapped until OWNER is freed); NULL if there is none.
 * Then *CLAIM, if not NULL, says this backend is to read the model and
 * share it with mtdpp_shared_put; otherwise the model is not shared (no
 * room, or another backend took too long to read it).
 */
MtdppModel *
mtdpp_shared_get(const MtdppSharedKey *key, MemoryContext owner, MtdppSharedClaim **claim)
{
	TimestampTz start = GetCurrentTimestamp();
	bool		waiting = false;
	Size		estimate = estimated_bytes(key);

	/* allocated first: nothing may fail once a slot counts this backend */
	Attachment *a = MemoryContextAllocZero(TopMemoryContext, sizeof(Attachment));
	MemoryContextCallback *cb = MemoryContextAlloc(owner, sizeof(MemoryContextCallback));
	MtdppSharedClaim *c = MemoryContextAllocZero(owner, sizeof(MtdppSharedClaim));

	if (!exit_registered)
	{
		before_shmem_exit(shared_exit, (Datum) 0);
		exit_registered = true;
	}
	*claim = NULL;
	for (;;)
	{
		int			found = -1,
					free_slot = -1;
		SharedSlot *s;

		LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
		for (int i = 0; i < SHARED_SLOTS; i++)
		{
			if (key_matches(&ctl->slots[i], key))
				found = i;
			else if (ctl->slots[i].state == SLOT_FREE && free_slot < 0)
				free_slot = i;
		}
		s = found >= 0 ? &ctl->slots[found] : NULL;
		if (s != NULL && s->state == SLOT_READY)
		{
			uint64		serial = s->serial;
			dsm_handle	handle = s->handle;

			for (Attachment *mine = attachments; mine != NULL; mine = mine->next)
				if (mine->slot == found && mine->serial == serial && !mine->released &&
					mine->seg != NULL)
				{
					LWLockRelease(ctl->lock);
					if (waiting)
						ConditionVariableCancelSleep();
					pfree(a);
					return attachment_use(mine, cb, owner);
				}
			s->backends++;
			attachment_add(a, cb, found, serial, owner);
			LWLockRelease(ctl->lock);
			if (waiting)
				ConditionVariableCancelSleep();
			return attach_ready(a, handle, key);
		}
		if (s != NULL)
		{
			/* another backend reads it: wait, unless that is this one */
			long		left = SHARED_WAIT_MS -
				(long) ((GetCurrentTimestamp() - start) / 1000);
			bool		mine = s->builder == MyProcPid;

			LWLockRelease(ctl->lock);
			if (mine || left <= 0)
				break;
			if (!waiting)
				ConditionVariablePrepareToSleep(&ctl->changed);
			waiting = true;
			ConditionVariableTimedSleep(&ctl->changed, left, PG_WAIT_EXTENSION);
			continue;
		}
		/* none: this backend reads it, if there is room (parallel mode cannot share it) */
		if (free_slot >= 0 && !IsInParallelMode() &&
			ctl->bytes + estimate <= budget_bytes())
		{
			s = &ctl->slots[free_slot];
			s->state = SLOT_BUILDING;
			s->serial = ctl->next_serial++;
			s->db = key->db;
			s->model_id = key->model_id;
			s->xmin = key->xmin;
			s->n_items = key->n_items;
			s->rank = key->rank;
			s->hash = key->hash;
			s->handle = 0;
			s->bytes = estimate;
			s->backends = 0;
			s->builder = MyProcPid;
			ctl->bytes += s->bytes;
			attachment_add(a, cb, free_slot, s->serial, owner);
			LWLockRelease(ctl->lock);
			c->key = *key;
			c->att = a;
			*claim = c;
			a = NULL;
			break;
		}
		LWLockRelease(ctl->lock);
		break;
	}
	if (waiting)
		ConditionVariableCancelSleep();
	if (a != NULL)
		pfree(a);
	return NULL;
}

/*
 * A new segment of SIZE bytes, pinned, mapped for the rest of the session;
 * NULL if the system has no room for it (a full /dev/shm, say), in which
 * case the model is simply not shared.  A subtransaction catches the error.
 */
static dsm_segment *
create_segment(Size size)
{
	MemoryContext old = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	dsm_segment *volatile seg = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(old);
	PG_TRY();
	{
		seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
		if (seg != NULL)
		{
			dsm_pin_mapping(seg);
			dsm_pin_segment(seg);
		}
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(old);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		ereport(LOG,
				(errmsg("mtdpp: a model of %zu bytes is not shared: %s", size, e->message)));
		FreeErrorData(e);
		seg = NULL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	CurrentResourceOwner = owner;
	return seg;
}

/*
 * Shares M, the model this backend has just read for CLAIM, and returns the
 * shared copy (M itself can then be freed), or NULL if it cannot be shared:
 * then the claim is given up and M stays this backend's own.
 */
MtdppModel *
mtdpp_shared_put(MtdppSharedClaim *claim, const MtdppModel *m)
{
	Attachment *a = claim->att;
	SharedSlot *s;
	SegmentHeader h;
	bool		room;
	bool		neighbors = mtdpp_kind(m->kind)->neighbors && m->nbr_start != NULL;

	memset(&h, 0, sizeof(h));
	h.n_neighbors = neighbors ? m->nbr_start[m->n_items] : 0;
	h.n_weights = mtdpp_kind(m->kind)->weights ? m->n_weights : 0;
	h.scan = m->scan_order != NULL;
	mtdpp_segment_layout(&h, m->n_items, m->rank, h.n_neighbors, neighbors);
	if (m->n_items != claim->key.n_items || a->released)
	{
		attachment_release(a);
		return NULL;
	}

	/* the estimate reserved did not count item-kNN's neighbours */
	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	s = &ctl->slots[a->slot];
	room = ctl->bytes - s->bytes + h.total <= budget_bytes();
	if (room)
	{
		ctl->bytes = ctl->bytes - s->bytes + h.total;
		s->bytes = h.total;
	}
	LWLockRelease(ctl->lock);
	if (!room || (a->seg = create_segment(h.total)) == NULL)
	{
		attachment_release(a);
		return NULL;
	}
	mtdpp_segment_fill(dsm_segment_address(a->seg), &h, m, &claim->key);

	LWLockAcquire(ctl->lock, LW_EXCLUSIVE);
	s->handle = dsm_segment_handle(a->seg);
	s->backends = 1;
	s->state = SLOT_READY;
	LWLockRelease(ctl->lock);
	ConditionVariableBroadcast(&ctl->changed);
	mtdpp_segment_point(&a->model, dsm_segment_address(a->seg));
	return &a->model;
}

/* The hash of a key's item versions, which a slot keeps. */
void
mtdpp_shared_key_hash(MtdppSharedKey *key)
{
	key->hash = hash_bytes_extended((const unsigned char *) key->versions,
									sizeof(MtdppItemVersion) * key->n_items,
									((uint64) key->model_id << 32) | key->xmin);
}

/*
 * mtdpp_shared_models(): the models shared in this server's memory, one
 * row per copy: its database, model_id, items, rank, bytes, the number of
 * backends that map it, and whether it is ready or still being read.
 */
Datum
mtdpp_shared_models(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SharedSlot	copy[SHARED_SLOTS];

	InitMaterializedSRF(fcinfo, 0);
	if (ctl == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(ctl->lock, LW_SHARED);
	memcpy(copy, ctl->slots, sizeof(copy));
	LWLockRelease(ctl->lock);
	for (int i = 0; i < SHARED_SLOTS; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {false};
		NameData	db_name;
		char	   *db;

		if (copy[i].state == SLOT_FREE)
			continue;
		db = get_database_name(copy[i].db);
		if (db != NULL)
			namestrcpy(&db_name, db);
		values[0] = NameGetDatum(&db_name);
		nulls[0] = db == NULL;
		values[1] = Int32GetDatum(copy[i].model_id);
		values[2] = Int32GetDatum(copy[i].n_items);
		values[3] = Int32GetDatum(copy[i].rank);
		values[4] = Int64GetDatum((int64) copy[i].bytes);
		values[5] = Int32GetDatum(copy[i].backends);
		values[6] = CStringGetTextDatum(copy[i].state == SLOT_READY ? "ready" : "reading");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
