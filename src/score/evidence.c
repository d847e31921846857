/*
 * score/evidence.c
 *		Co-occurrence evidence: what the neighbour lists of a basket's items
 *		add to each item's score, for the kinds that keep such lists (a
 *		kind adds it to its DPP's score; mtdpp_similar of the lists reads
 *		one item's).
 *
 * The evidence of an item c for a context is the sum of the weights of c in
 * the lists of the context's items; it is zero on every item no list
 * holds, which is what lets the pruned top k (topk_bounded.c, topk_scan.c)
 * raise the bounds of the listed items alone.
 */
#include "postgres.h"

#include "model/model.h"
#include "score/score.h"

/*
 * The evidence of every item as a completion of the context CTX of B items
 * into EV (n_items entries): the sum of the basket items' neighbour-list
 * weights.
 */
void
mtdpp_evidence(const MtdppModel *m, const int32 *ctx, int b, double *ev)
{
	memset(ev, 0, sizeof(double) * m->n_items);
	if (m->nbr_start == NULL)
		return;
	for (int s = 0; s < b; s++)
	{
		int			j = ctx[s];

		for (int64 q = m->nbr_start[j]; q < m->nbr_start[j + 1]; q++)
			ev[m->nbr_index[q]] += m->nbr_weight[q];
	}
}

/*
 * The items whose evidence EV (mtdpp_evidence of CTX) is not 0 and that
 * EXCLUDE does not flag, each once, into LIST (room for n_items), in the
 * order of the context's lists; returns how many, and flags them in
 * LISTED (n_items entries, false on entry).
 */
int
mtdpp_evidence_items(const MtdppModel *m, const int32 *ctx, int b, const double *ev,
					 const bool *exclude, int32 *list, bool *listed)
{
	int			nl = 0;

	if (m->nbr_start == NULL)
		return 0;
	for (int s = 0; s < b; s++)
		for (int64 q = m->nbr_start[ctx[s]]; q < m->nbr_start[ctx[s] + 1]; q++)
		{
			int32		c = m->nbr_index[q];

			if (!listed[c] && !exclude[c] && ev[c] != 0.0)
			{
				listed[c] = true;
				list[nl++] = c;
			}
		}
	return nl;
}
