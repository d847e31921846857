/*
 * store/shared_models_segment.c
 *		The layout of a shared model's segment (shared_models.c): a header,
 *		then the model's arrays, each on a cache line of its own, at the
 *		offsets the header gives; written once by the backend that reads the
 *		model, then pointed at by every backend that maps it.
 */
#include "postgres.h"

#include "model/kinds.h"
#include "model/model.h"
#include "store/shared_models_int.h"
#include "store/store.h"

#define SHARED_ALIGN	64		/* each array starts on a cache line */

/* Offsets of a segment's arrays for a model of this shape (NN neighbours). */
void
mtdpp_segment_layout(SegmentHeader *h, int n_items, int rank, int64 nn, bool neighbors)
{
	Size		n = Max(n_items, 1);
	Size		cells = mul_size(n, Max(rank, 1));
	Size		panels = (n + MTDPP_PANEL - 1) / MTDPP_PANEL;
	Size		groups = (n + MTDPP_SCAN_GROUP - 1) / MTDPP_SCAN_GROUP;
	Size		at = TYPEALIGN(SHARED_ALIGN, sizeof(SegmentHeader));

#define PLACE(field, bytes) \
	do { h->field = at; at = TYPEALIGN(SHARED_ALIGN, add_size(at, (bytes))); } while (0)
	PLACE(item_ids, mul_size(n, sizeof(int32)));
	PLACE(popularity, mul_size(n, sizeof(int32)));
	PLACE(D, mul_size(n, sizeof(double)));
	PLACE(D2, mul_size(n, sizeof(double)));
	PLACE(Vnorm2, mul_size(n, sizeof(double)));
	PLACE(Vf, mul_size(cells, sizeof(float)));
	PLACE(R2f, mul_size(mul_size(panels, MTDPP_PANEL * sizeof(float)), Max(rank, 1)));
	/* output embeddings with their sign, shared weights (n_weights set first) */
	PLACE(Rf, h->n_weights > 0 ? mul_size(cells, sizeof(float)) : 0);
	PLACE(weights, mul_size(h->n_weights, sizeof(double)));
	PLACE(nbr_start, neighbors ? mul_size(n + 1, sizeof(int64)) : 0);
	PLACE(nbr_index, neighbors ? mul_size(Max(nn, 1), sizeof(int32)) : 0);
	PLACE(nbr_weight, neighbors ? mul_size(Max(nn, 1), sizeof(float4)) : 0);
	PLACE(versions, mul_size(n, sizeof(MtdppItemVersion)));
	PLACE(scan_order, h->scan ? mul_size(n, sizeof(int32)) : 0);
	PLACE(scan_key, h->scan ? mul_size(n, sizeof(double)) : 0);
	PLACE(scan_R2f, h->scan ? mul_size(mul_size(groups, MTDPP_SCAN_GROUP * sizeof(float)), Max(rank, 1)) : 0);
	PLACE(scan_env, h->scan ? mul_size(mul_size(mtdpp_scan_groups(n), MTDPP_PANEL * sizeof(float)), Max(rank, 1)) : 0);
#undef PLACE
	h->total = at;
}

/* The model in a mapped segment: arrays pointing into it. */
void
mtdpp_segment_point(MtdppModel *m, char *base)
{
	SegmentHeader *h = (SegmentHeader *) base;
	bool		neighbors = mtdpp_kind((MtdppKind) h->kind)->neighbors;

	memset(m, 0, sizeof(MtdppModel));
	m->kind = (MtdppKind) h->kind;
	m->n_items = h->n_items;
	m->rank = h->rank;
	m->log_w = h->log_w;
	m->blocks = h->blocks;
	m->own = h->own;
	m->n_baskets = h->n_baskets;
	m->item_ids = (int32 *) (base + h->item_ids);
	m->popularity = (int32 *) (base + h->popularity);
	m->D = (double *) (base + h->D);
	m->D2 = (double *) (base + h->D2);
	m->Vnorm2 = (double *) (base + h->Vnorm2);
	m->Vf = (float *) (base + h->Vf);
	m->R2f = (float *) (base + h->R2f);
	if (h->n_weights > 0)
	{
		m->Rf = (float *) (base + h->Rf);
		m->n_weights = h->n_weights;
		m->weights = (double *) (base + h->weights);
	}
	m->nbr_start = neighbors ? (int64 *) (base + h->nbr_start) : NULL;
	m->nbr_index = neighbors ? (int32 *) (base + h->nbr_index) : NULL;
	m->nbr_weight = neighbors ? (float4 *) (base + h->nbr_weight) : NULL;
	m->scan_order = h->scan ? (int32 *) (base + h->scan_order) : NULL;
	m->scan_key = h->scan ? (double *) (base + h->scan_key) : NULL;
	m->scan_R2f = h->scan ? (float *) (base + h->scan_R2f) : NULL;
	m->scan_env = h->scan ? (float *) (base + h->scan_env) : NULL;
}

/* Copies model M, a cache's model, and its key's versions into BASE. */
void
mtdpp_segment_fill(char *base, const SegmentHeader *layout_of, const MtdppModel *m,
				   const MtdppSharedKey *key)
{
	SegmentHeader *h = (SegmentHeader *) base;
	Size		n = m->n_items;
	Size		cells = n * m->rank;
	Size		panels = (Max(n, 1) + MTDPP_PANEL - 1) / MTDPP_PANEL;

	*h = *layout_of;
	h->magic = SHARED_MAGIC;
	h->kind = m->kind;
	h->n_items = m->n_items;
	h->rank = m->rank;
	h->n_baskets = m->n_baskets;
	h->log_w = m->log_w;
	h->blocks = m->blocks;
	h->own = m->own;
	memcpy(base + h->item_ids, m->item_ids, n * sizeof(int32));
	memcpy(base + h->popularity, m->popularity, n * sizeof(int32));
	memcpy(base + h->D, m->D, n * sizeof(double));
	memcpy(base + h->D2, m->D2, n * sizeof(double));
	memcpy(base + h->Vnorm2, m->Vnorm2, n * sizeof(double));
	memcpy(base + h->Vf, m->Vf, cells * sizeof(float));
	if (m->R2f != NULL)
		memcpy(base + h->R2f, m->R2f, panels * MTDPP_PANEL * sizeof(float) * Max(m->rank, 1));
	if (h->n_weights > 0)
	{
		memcpy(base + h->Rf, m->Rf, cells * sizeof(float));
		memcpy(base + h->weights, m->weights, h->n_weights * sizeof(double));
	}
	if (h->scan)
	{
		Size		groups = (Max(n, 1) + MTDPP_SCAN_GROUP - 1) / MTDPP_SCAN_GROUP;

		memcpy(base + h->scan_order, m->scan_order, n * sizeof(int32));
		memcpy(base + h->scan_key, m->scan_key, n * sizeof(double));
		memcpy(base + h->scan_R2f, m->scan_R2f, groups * MTDPP_SCAN_GROUP * sizeof(float) * Max(m->rank, 1));
		memcpy(base + h->scan_env, m->scan_env,
			   mtdpp_scan_groups(n) * MTDPP_PANEL * sizeof(float) * Max(m->rank, 1));
	}
	if (m->nbr_start != NULL)
	{
		memcpy(base + h->nbr_start, m->nbr_start, (n + 1) * sizeof(int64));
		memcpy(base + h->nbr_index, m->nbr_index, h->n_neighbors * sizeof(int32));
		memcpy(base + h->nbr_weight, m->nbr_weight, h->n_neighbors * sizeof(float4));
	}
	memcpy(base + h->versions, key->versions, n * sizeof(MtdppItemVersion));
}
