/*
 * numeric/helper_thread.c
 *		A second thread for pure computation, used by training and by the
 *		training aggregate's final merge.
 *
 * Started once, it waits for a job (a function and its argument), runs it,
 * and waits again.  It blocks every signal, so the backend's handlers only
 * ever run on the backend's own thread, and its jobs must not allocate,
 * raise errors or look at interrupts: they only compute, over memory set up
 * beforehand.  A callback of the memory context it was started in stops it,
 * on success, error or cancel alike, before that memory goes.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "numeric/helper_thread.h"

struct MtdppHelper
{
	pthread_t	thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void		(*fn) (void *);
	void	   *arg;
	bool		busy;			/* a job is posted and not finished */
	bool		quit;
	MemoryContextCallback stop;
	MemoryContext own;			/* mtdpp_helper_start_for's context, or NULL */
};

static void *
helper_main(void *arg)
{
	MtdppHelper *h = (MtdppHelper *) arg;

	pthread_mutex_lock(&h->lock);
	for (;;)
	{
		while (!h->busy && !h->quit)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->quit)
			break;
		pthread_mutex_unlock(&h->lock);
		h->fn(h->arg);
		pthread_mutex_lock(&h->lock);
		h->busy = false;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void
helper_stop(void *arg)
{
	MtdppHelper *h = (MtdppHelper *) arg;

	pthread_mutex_lock(&h->lock);
	h->quit = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
}

/* A second thread in the current memory context, or NULL if none starts. */
MtdppHelper *
mtdpp_helper_start(void)
{
	MtdppHelper *h = palloc0(sizeof(MtdppHelper));
	sigset_t	all,
				old;
	int			rc;

	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&h->thread, NULL, helper_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
	{
		pthread_cond_destroy(&h->cond);
		pthread_mutex_destroy(&h->lock);
		pfree(h);
		return NULL;
	}
	h->stop.func = helper_stop;
	h->stop.arg = h;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &h->stop);
	return h;
}

/*
 * A second thread for one piece of work, which its caller stops with
 * mtdpp_helper_stop as soon as it is done (an error stops it when the
 * current memory context goes): in a memory context of its own, known as
 * PURPOSE in memory dumps.  NULL when max_parallel_maintenance_workers
 * allows no worker, or no thread starts.
 */
MtdppHelper *
mtdpp_helper_start_for(const char *purpose)
{
	MemoryContext own,
				old;
	MtdppHelper *h;

	if (max_parallel_maintenance_workers <= 0)
		return NULL;
	own = AllocSetContextCreate(CurrentMemoryContext, "mtdpp helper thread",
								ALLOCSET_SMALL_SIZES);
	MemoryContextSetIdentifier(own, purpose);
	old = MemoryContextSwitchTo(own);
	h = mtdpp_helper_start();
	MemoryContextSwitchTo(old);
	if (h == NULL)
	{
		MemoryContextDelete(own);
		return NULL;
	}
	h->own = own;
	return h;
}

/* Stops H, of mtdpp_helper_start_for, and frees it; nothing if H is NULL. */
void
mtdpp_helper_stop(MtdppHelper *h)
{
	if (h != NULL)
		MemoryContextDelete(h->own);
}

/* FN(A) here and FN(B) on helper H (or here too, if H is NULL); returns when both are done */
void
mtdpp_helper_run_pair(MtdppHelper *h, void (*fn) (void *), void *a, void *b)
{
	if (h == NULL)
	{
		fn(a);
		fn(b);
		return;
	}
	pthread_mutex_lock(&h->lock);
	h->fn = fn;
	h->arg = b;
	h->busy = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	fn(a);
	pthread_mutex_lock(&h->lock);
	while (h->busy)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}
