/*
 * store/store.h
 *		Models in the tables of schema mtdpp: writing them (store.c), reading
 *		and caching them per backend (cache.c), one copy per server
 *		(shared_models.c).
 */
#ifndef MTDPP_STORE_H
#define MTDPP_STORE_H

#include "fmgr.h"

#include "fit/params.h"

/* store.c */
extern void mtdpp_check_name(const char *what, text *name);
extern text *mtdpp_text_arg(FunctionCallInfo fcinfo, int arg, const char *what);
extern void mtdpp_unknown_model(const char *name);
extern char *mtdpp_qualified_relation(Oid relid);
/* the keys a training numbered its items by (train_sql.c): item i is texts[i - 1] */
typedef struct MtdppTrainedKeys
{
	Oid			type;			/* INT8OID, TEXTOID or UUIDOID */
	int			n;
	Datum	   *texts;			/* text, pointing into ARRAY */
	Datum		array;			/* text[] */
} MtdppTrainedKeys;
extern int	mtdpp_store_model(const char *name, MtdppModel *m, bool activate,
							  const char *source, const MtdppTrainedKeys *keys);
extern void mtdpp_store_metrics(int model_id, const char *json);
extern bool mtdpp_has_column(const char *col);
extern void mtdpp_store_test(int model_id, const char *json);
extern void mtdpp_store_promotion(int model_id, const char *json);
extern void mtdpp_activate_version(const char *name, int id);
extern int	mtdpp_version_to_activate(FunctionCallInfo fcinfo, char **name);
extern void mtdpp_check_item_type(const char *name, Oid type);

/* isolation.c */
extern bool mtdpp_models_isolated(void);
extern bool mtdpp_rls_filters(Oid relid, bool isolated);
extern void mtdpp_name_not_available(const char *name);
extern int	mtdpp_name_next_version(const char *name);
extern void mtdpp_delete_items_of(Datum ids);

/* model_read.c */
extern int	mtdpp_model_tables_connect(void);
extern void mtdpp_model_tables_done(int nest);
extern MtdppModel *mtdpp_read_model_rows(MemoryContext context, int model_id, const char *name,
										 const char *kind, int rank, int n_items, int n_baskets,
										 double log_w, bool row_security);

/* item_keys.c: items known by bigint, text or uuid keys */
typedef struct MtdppItemKeys
{
	Oid			type;			/* INT8OID, TEXTOID or UUIDOID */
	int32		n;				/* item numbers 1..n */
	Datum	   *keys;			/* item i's key: keys[i - 1], of TYPE */
	int32	   *slots;			/* hash table: item numbers, 0 for none */
	uint32		mask;			/* its size, minus 1 */
} MtdppItemKeys;
extern const char *mtdpp_key_type_name(Oid type);
extern int32 mtdpp_key_item(const MtdppItemKeys *keys, Datum key);
extern MtdppItemKeys *mtdpp_read_item_keys(MemoryContext context, int model_id);

/* cache.c */
extern void mtdpp_cache_init(void);
extern bool mtdpp_has_relation(const char *relname);
extern MtdppModel *mtdpp_lookup_model(const char *name, int *model_id, const char **model_name);
extern const MtdppItemKeys *mtdpp_model_keys(const MtdppModel *m);

/* what a statement is to hear once (cache.c) */
typedef struct MtdppStatementOnce
{
	MemoryContext context;
	uint64		serial;
	uint32		lxid;
} MtdppStatementOnce;
extern bool mtdpp_first_in_statement(MtdppStatementOnce *once);

/* shared_models.c: one copy of a model per server */
typedef struct MtdppItemVersion
{
	int32		item_id;
	TransactionId xmin;			/* of its row of mtdpp.items */
} MtdppItemVersion;

/* the rows a model was read from (see shared_models.c) */
typedef struct MtdppSharedKey
{
	Oid			db;
	int32		model_id;
	TransactionId xmin;			/* of its row of mtdpp.models */
	int32		n_items;
	int32		rank;
	uint64		hash;			/* of VERSIONS, by mtdpp_shared_key_hash */
	MtdppItemVersion *versions; /* n_items, by item_id */
} MtdppSharedKey;

typedef struct MtdppSharedClaim MtdppSharedClaim;

extern void mtdpp_shared_init(void);
extern bool mtdpp_shared_enabled(void);
extern void mtdpp_shared_key_hash(MtdppSharedKey *key);
extern MtdppModel *mtdpp_shared_get(const MtdppSharedKey *key, MemoryContext owner,
									MtdppSharedClaim **claim);
extern MtdppModel *mtdpp_shared_put(MtdppSharedClaim *claim, const MtdppModel *m);

#endif							/* MTDPP_STORE_H */
