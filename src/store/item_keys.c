/*
 * store/item_keys.c
 *		Items known by keys of another type than integer: bigint, text or
 *		uuid, the type of the orders table's item column.
 *
 * Training numbers the distinct keys of the item column 1, 2, ... in their
 * order (text in the "C" collation, so the numbering is the same on every
 * server) and fits the model on those numbers; the model records the key
 * type (mtdpp.models.item_type) and each item its key, in text form
 * (mtdpp.items.item_key).  Query time reads them back once per cached
 * model into a hash table from key to number, so a key costs one hash
 * lookup on the way in and an array read on the way out.  A key the model
 * does not know gets a negative number of its own, which no item of the
 * model has.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "access/detoast.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

#include "shown.h"
#include "store/store.h"

/* the name a key type is recorded under, and back */
const char *
mtdpp_key_type_name(Oid type)
{
	switch (type)
	{
		case INT8OID:
			return "bigint";
		case TEXTOID:
			return "text";
		case UUIDOID:
			return "uuid";
		default:
			return "integer";
	}
}

static Oid
key_type_from_name(const char *name, int model_id)
{
	if (strcmp(name, "bigint") == 0)
		return INT8OID;
	if (strcmp(name, "text") == 0)
		return TEXTOID;
	if (strcmp(name, "uuid") == 0)
		return UUIDOID;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("model %d has item_type \"%s\", expected bigint, text or uuid", model_id,
					mtdpp_shown(name)),
			 errhint("The rows of mtdpp.models were changed by hand; train the model again.")));
	pg_unreachable();
}

/* The bytes key D of TYPE is compared by; SCRATCH holds a bigint's. */
static const char *
key_bytes(Oid type, Datum d, int *len, int64 *scratch)
{
	if (type == INT8OID)
	{
		*scratch = DatumGetInt64(d);
		*len = sizeof(int64);
		return (const char *) scratch;
	}
	if (type == UUIDOID)
	{
		*len = UUID_LEN;
		return (const char *) DatumGetUUIDP(d)->data;
	}
	*len = VARSIZE_ANY_EXHDR(DatumGetPointer(d));
	return VARDATA_ANY(DatumGetPointer(d));
}

static uint32
key_hash(const MtdppItemKeys *keys, Datum d, const char **bytes, int *len)
{
	int64		scratch;
	const char *b = key_bytes(keys->type, d, len, &scratch);

	if (keys->type == INT8OID)
	{
		/* the scratch dies here: compare bigints by value */
		*bytes = NULL;
		return hash_bytes_uint32((uint32) scratch ^ (uint32) (scratch >> 32));
	}
	*bytes = b;
	return hash_bytes((const unsigned char *) b, *len);
}

static bool
key_equal(const MtdppItemKeys *keys, Datum stored, Datum d, const char *bytes, int len)
{
	int			slen;
	int64		scratch;
	const char *s;

	if (keys->type == INT8OID)
		return DatumGetInt64(stored) == DatumGetInt64(d);
	s = key_bytes(keys->type, stored, &slen, &scratch);
	return slen == len && memcmp(s, bytes, len) == 0;
}

/*
 * The item number of key D (of the model's key type): 1 to keys->n, or, for
 * a key the model does not know, a negative number derived from the key.
 */
int32
mtdpp_key_item(const MtdppItemKeys *keys, Datum d)
{
	const char *bytes;
	int			len;
	uint32		h = key_hash(keys, d, &bytes, &len);

	for (uint32 s = h & keys->mask;; s = (s + 1) & keys->mask)
	{
		int32		id = keys->slots[s];

		if (id == 0)
			return -1 - (int32) (h & 0x3fffffff);
		if (key_equal(keys, keys->keys[id - 1], d, bytes, len))
			return id;
	}
}

/* Enters item ID, whose key keys->keys[ID - 1] holds, into the hash table. */
static void
add_key(MtdppItemKeys *keys, int32 id, int model_id)
{
	const char *bytes;
	int			len;
	uint32		s = key_hash(keys, keys->keys[id - 1], &bytes, &len) & keys->mask;

	while (keys->slots[s] != 0)
	{
		if (keys->slots[s] == id ||
			key_equal(keys, keys->keys[keys->slots[s] - 1], keys->keys[id - 1], bytes, len))
		{
			Oid			output;
			bool		varlena;

			getTypeOutputInfo(keys->type, &output, &varlena);
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("items %d and %d of model %d have the same key \"%s\"", keys->slots[s], id, model_id,
							mtdpp_shown(OidOutputFunctionCall(output, keys->keys[id - 1]))),
					 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
		}
		s = (s + 1) & keys->mask;
	}
	keys->slots[s] = id;
}

/*
 * The keys of model MODEL_ID's items, allocated in CONTEXT; NULL when its
 * items are integers.  Runs inside the caller's SPI connection, under its
 * snapshot, as the calling role.
 */
MtdppItemKeys *
mtdpp_read_item_keys(MemoryContext context, int model_id)
{
	Datum		arg = Int32GetDatum(model_id);
	MtdppItemKeys *keys;
	MemoryContext old;
	bool		isnull;
	Datum		d;
	Oid			input,
				ioparam;
	int32		max_id;
	int64		count;
	uint32		size = 2;
	Portal		portal;
	long		batch = 1024;
	uint64		seen = 0;
	Size		bytes = 0;

	if (SPI_execute_with_args("SELECT item_type FROM mtdpp.models WHERE model_id OPERATOR(pg_catalog.=) $1",
							  1, (Oid[]) {INT4OID}, &arg, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not read the item type of model %d", model_id);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return NULL;
	old = MemoryContextSwitchTo(context);
	keys = palloc0(sizeof(MtdppItemKeys));
	keys->type = key_type_from_name(TextDatumGetCString(d), model_id);
	MemoryContextSwitchTo(old);

	/*
	 * The keys are read through a cursor a few at a time and kept once, in
	 * CONTEXT: a model's keys may be long (training has bounded them by its
	 * maintenance_work_mem), and reading them whole would hold them twice
	 * more, in the result and in its text form.
	 */
	if (SPI_execute_with_args("SELECT pg_catalog.count(*), pg_catalog.max(item_id) FROM mtdpp.items "
							  "WHERE model_id OPERATOR(pg_catalog.=) $1",
							  1, (Oid[]) {INT4OID}, &arg, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not count the item keys of model %d", model_id);
	count = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	max_id = isnull ? 0 : DatumGetInt32(d);
	while (size < 2 * (uint64) count)
		size *= 2;
	getTypeInputInfo(keys->type, &input, &ioparam);
	old = MemoryContextSwitchTo(context);
	keys->n = max_id;
	keys->keys = palloc0(sizeof(Datum) * Max(max_id, 1));
	keys->slots = palloc0(sizeof(int32) * size);
	keys->mask = size - 1;
	MemoryContextSwitchTo(old);
	portal = SPI_cursor_open_with_args(NULL, "SELECT item_id, item_key FROM mtdpp.items "
									   "WHERE model_id OPERATOR(pg_catalog.=) $1",
									   1, (Oid[]) {INT4OID}, &arg, NULL, true, 0);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, batch);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			int32		id = DatumGetInt32(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
			Datum		value = SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull);

			if (id < 1 || id > max_id || isnull)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("item %d of model %d has %s", id, model_id,
								isnull ? "no item_key" : "an item_id below 1"),
						 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
			bytes += toast_raw_datum_size(value);
			old = MemoryContextSwitchTo(context);
			if (keys->type == TEXTOID)
				keys->keys[id - 1] = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(value)));
			else
			{
				char	   *c = TextDatumGetCString(value);

				keys->keys[id - 1] = OidInputFunctionCall(input, c, ioparam, -1);
				pfree(c);
			}
			MemoryContextSwitchTo(old);
			add_key(keys, id, model_id);
		}
		seen += SPI_processed;
		/* about a megabyte a fetch, however long the keys */
		batch = Max(1, Min(4096, (long) ((Size) 1048576 / Max((Size) 1, bytes / seen))));
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	return keys;
}
