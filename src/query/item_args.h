/*
 * query/item_args.h
 *		The items of a call: baskets and item lists in the type the caller
 *		uses, read as the model's item numbers; items answered in that type
 *		(item_args.c).
 */
#ifndef MTDPP_ITEM_ARGS_H
#define MTDPP_ITEM_ARGS_H

#include "fmgr.h"

#include "model/model.h"
#include "store/store.h"

typedef struct MtdppCallItems
{
	const MtdppModel *m;
	const char *model_name;
	const MtdppItemKeys *keys;	/* NULL: the model's items are integers */
	Oid			out_type;		/* base type of the items the call answers */
	Oid			out_domain;		/* the domain over it they are answered in, or 0 */
	void	  **domain_extra;	/* domain_check's cache for it */
} MtdppCallItems;

extern bool mtdpp_item_type_accepted(Oid elem, const MtdppItemKeys *keys);
extern void mtdpp_call_items(MtdppCallItems *ci, FunctionCallInfo fcinfo, int out_col,
							 const MtdppModel *m, const char *model_name);
extern void mtdpp_check_items_arg(FunctionCallInfo fcinfo, int arg, const char *what);
extern int32 *mtdpp_items_arg(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg,
							  const char *what, int *n);
extern char *mtdpp_item_arg_text(FunctionCallInfo fcinfo, int arg);
extern int32 mtdpp_item_arg(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg);
extern int32 *mtdpp_key_array_items(const MtdppItemKeys *keys, ArrayType *a, int *n);
extern Datum *mtdpp_items_given(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg,
								const char *what, int *n);
extern Datum mtdpp_item_datum(const MtdppCallItems *ci, int32 item_id);

#endif
