/*
 * query/item_args.c
 *		The items of a call, in the type the caller uses.
 *
 * A model's items are integers, or keys of type bigint, text or uuid
 * (item_keys.c).  The SQL functions take baskets and item lists as an array
 * of any type (the polymorphic forms, which answer items in that type;
 * integer[] among them, and the integer[] forms of 0.5.0 a database may
 * keep), as smallint[], or as an untyped literal such as '{1,2}', read as
 * an array of the model's item type.  An integer model takes arrays
 * of any integer type, a bigint model too, a text model text or varchar
 * arrays, a uuid model uuid arrays; anything else is an error naming the
 * model's item type.  An integer[] basket with an integer model is read in
 * place, as before keys existed.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/execnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "query/item_args.h"
#include "shown.h"

static Oid
model_type(const MtdppCallItems *ci)
{
	return ci->keys != NULL ? ci->keys->type : INT4OID;
}

/* numeric too: drivers send lists of integers as numeric[] */
static bool
integer_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == NUMERICOID;
}

/* integer element D of type ELEM as an int64 */
static int64
integer_value(Oid elem, Datum d)
{
	int64		v;

	if (elem == INT2OID)
		return DatumGetInt16(d);
	if (elem == INT4OID)
		return DatumGetInt32(d);
	if (elem == INT8OID)
		return DatumGetInt64(d);
	v = DatumGetInt64(DirectFunctionCall1(numeric_int8, d));
	if (!DatumGetBool(DirectFunctionCall2(numeric_eq, d, NumericGetDatum(int64_to_numeric(v)))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("item %s is not an integer",
						DatumGetCString(DirectFunctionCall1(numeric_out, d))),
				 errhint("Items of an integer model are whole numbers.")));
	return v;
}

/* Whether elements of type ELEM may name items of model type MT. */
static bool
accepted(Oid elem, Oid mt)
{
	if (mt == INT4OID || mt == INT8OID)
		return integer_type(elem);
	if (mt == TEXTOID)
		return elem == TEXTOID || elem == VARCHAROID;
	return elem == mt;
}

/* The same rule for items read from a table (evaluate.c): KEYS NULL for integers. */
bool
mtdpp_item_type_accepted(Oid elem, const MtdppItemKeys *keys)
{
	return accepted(elem, keys != NULL ? keys->type : INT4OID);
}

void
mtdpp_call_items(MtdppCallItems *ci, FunctionCallInfo fcinfo, int out_col,
				 const MtdppModel *m, const char *model_name)
{
	TupleDesc	td;

	ci->m = m;
	ci->model_name = model_name;
	ci->keys = mtdpp_model_keys(m);
	ci->out_type = InvalidOid;
	ci->out_domain = InvalidOid;
	ci->domain_extra = NULL;
	/* the row the executor expects, or (without one) the call's result type */
	td = fcinfo->resultinfo != NULL && IsA(fcinfo->resultinfo, ReturnSetInfo) ?
		((ReturnSetInfo *) fcinfo->resultinfo)->expectedDesc : NULL;
	if (out_col >= 0 && (td != NULL || get_call_result_type(fcinfo, NULL, &td) == TYPEFUNC_COMPOSITE))
	{
		Oid			t = TupleDescAttr(td, out_col)->atttypid;
		Oid			elem = get_element_type(getBaseType(t));
		Oid			declared = OidIsValid(elem) ? elem : t;

		ci->out_type = getBaseType(declared);
		/* items answered in a domain (a basket of it) pass its constraints */
		if (ci->out_type != declared)
		{
			ci->out_domain = declared;
			ci->domain_extra = palloc0(sizeof(void *));
		}
	}
}

/*
 * The type of argument ARG as the call gives it, domains read as their
 * base; without a call expression to tell, OTHERWISE (integer[], the only
 * form that may be called without one).
 */
static Oid
arg_type(FunctionCallInfo fcinfo, int arg, Oid otherwise)
{
	Oid			t = get_fn_expr_argtype(fcinfo->flinfo, arg);

	return OidIsValid(t) ? getBaseType(t) : otherwise;
}

/* an untyped literal ('{1,2}') or a text argument: not an array yet */
static bool
literal_arg(Oid type)
{
	return type == UNKNOWNOID || type == TEXTOID;
}

static void
check_shape(ArrayType *a, const char *what)
{
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array, not %d-dimensional", what, ARR_NDIM(a)),
				 errhint("Pass a flat array of item ids.")));
	if (array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not contain NULL elements", what),
				 errhint("Remove NULLs with array_remove(%s, NULL).", what)));
}

/* Argument ARG's NULL and shape checked, before a model is looked up. */
void
mtdpp_check_items_arg(FunctionCallInfo fcinfo, int arg, const char *what)
{
	Oid			t;

	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Pass an array of items, such as ARRAY[1, 2, 3]; '{}' for none.")));
	t = arg_type(fcinfo, arg, INT4ARRAYOID);
	if (literal_arg(t))
		return;					/* parsed once the model's type is known */
	if (!OidIsValid(get_element_type(t)))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be an array, not %s", what, format_type_be(t)),
				 errhint("Pass an array of items, such as ARRAY[1, 2, 3].")));
	check_shape(PG_GETARG_ARRAYTYPE_P(arg), what);
}

static void
wrong_type(const MtdppCallItems *ci, const char *what, Oid given)
{
	const char *mt = format_type_be(model_type(ci));

	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("%s holds %s, but the items of model \"%s\" are %s", what,
					format_type_be(given), mtdpp_shown(ci->model_name), mt),
			 errhint("Pass the items as %s, the type of the item column the model was trained on.", mt)));
}

/* Argument ARG as an array, with the type of its elements into *ELEM. */
static ArrayType *
array_arg(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg, const char *what, Oid *elem)
{
	Oid			t;
	ArrayType  *a;

	mtdpp_check_items_arg(fcinfo, arg, what);
	t = arg_type(fcinfo, arg, INT4ARRAYOID);
	if (literal_arg(t))
	{
		char	   *s = t == UNKNOWNOID ? DatumGetCString(PG_GETARG_DATUM(arg)) :
			text_to_cstring(PG_GETARG_TEXT_PP(arg));

		a = DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, s, model_type(ci), -1));
		check_shape(a, what);
		*elem = model_type(ci);
		return a;
	}
	a = PG_GETARG_ARRAYTYPE_P(arg);
	*elem = getBaseType(ARR_ELEMTYPE(a));
	if (!accepted(*elem, model_type(ci)))
		wrong_type(ci, what, *elem);
	return a;
}

/* element D of type ELEM as an integer model's item id (out of range: none) */
static int32
integer_item(Oid elem, Datum d)
{
	int64		v = integer_value(elem, d);

	return (v < PG_INT32_MIN || v > PG_INT32_MAX) ? PG_INT32_MIN : (int32) v;
}

static int32
key_item(const MtdppItemKeys *keys, Oid elem, Datum d)
{
	if (keys->type == INT8OID && elem != INT8OID)
		d = Int64GetDatum(integer_value(elem, d));
	return mtdpp_key_item(keys, d);
}

/* The elements of array A (no NULLs: checked before), *N of them. */
static Datum *
array_datums(ArrayType *a, int *n)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *d;

	get_typlenbyvalalign(ARR_ELEMTYPE(a), &typlen, &typbyval, &typalign);
	deconstruct_array(a, ARR_ELEMTYPE(a), typlen, typbyval, typalign, &d, NULL, n);
	return d;
}

/*
 * The items of argument ARG (an array, or an array literal) as the model's
 * item numbers, *N of them, in the order given.
 */
int32 *
mtdpp_items_arg(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg, const char *what, int *n)
{
	Oid			elem;
	ArrayType  *a = array_arg(ci, fcinfo, arg, what, &elem);
	Datum	   *d;
	int32	   *ids;

	if (elem == INT4OID && ci->keys == NULL)
	{
		*n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
		return (int32 *) ARR_DATA_PTR(a);	/* read in place */
	}
	d = array_datums(a, n);
	ids = palloc(sizeof(int32) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		ids[i] = ci->keys == NULL ? integer_item(elem, d[i]) : key_item(ci->keys, elem, d[i]);
	return ids;
}

/* The array A of the model's key type as item numbers, *N of them. */
int32 *
mtdpp_key_array_items(const MtdppItemKeys *keys, ArrayType *a, int *n)
{
	Datum	   *d = array_datums(a, n);
	int32	   *ids;

	ids = palloc(sizeof(int32) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		ids[i] = mtdpp_key_item(keys, d[i]);
	return ids;
}

/* The single item of argument ARG (a value, or an untyped literal). */
int32
mtdpp_item_arg(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg)
{
	Oid			t = arg_type(fcinfo, arg, INT4OID);
	Datum		d = PG_GETARG_DATUM(arg);

	if (literal_arg(t) && !accepted(TEXTOID, model_type(ci)))
	{
		Oid			input,
					ioparam;
		char	   *s = t == UNKNOWNOID ? DatumGetCString(d) : TextDatumGetCString(d);

		getTypeInputInfo(model_type(ci), &input, &ioparam);
		d = OidInputFunctionCall(input, s, ioparam, -1);
		t = model_type(ci);
	}
	else if (t == UNKNOWNOID)
	{
		d = CStringGetTextDatum(DatumGetCString(d));
		t = TEXTOID;
	}
	if (!accepted(t, model_type(ci)))
		wrong_type(ci, "item", t);
	return ci->keys == NULL ? integer_item(t, d) : key_item(ci->keys, t, d);
}

/* an integer V as the call's answer type */
static Datum
integer_datum(const MtdppCallItems *ci, int64 v)
{
	switch (ci->out_type)
	{
		case INT8OID:
			return Int64GetDatum(v);
		case INT4OID:
		case INT2OID:
			if (v < (ci->out_type == INT2OID ? PG_INT16_MIN : PG_INT32_MIN) ||
				v > (ci->out_type == INT2OID ? PG_INT16_MAX : PG_INT32_MAX))
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("item " INT64_FORMAT " of model \"%s\" is beyond the range of %s",
								v, mtdpp_shown(ci->model_name), format_type_be(ci->out_type)),
						 errhint("Pass the basket as bigint[] for answers of type bigint.")));
			return ci->out_type == INT2OID ? Int16GetDatum((int16) v) : Int32GetDatum((int32) v);
		case NUMERICOID:
			return NumericGetDatum(int64_to_numeric(v));
		case TEXTOID:
		case VARCHAROID:
			return CStringGetTextDatum(psprintf(INT64_FORMAT, v));
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the items of model \"%s\" are integers, but this call answers %s",
							mtdpp_shown(ci->model_name), format_type_be(ci->out_type)),
					 errhint("Pass the basket as integer[].")));
	}
	pg_unreachable();
}

/* Item ITEM_ID of the model, in the type the call answers, domain unchecked. */
static Datum
item_datum(const MtdppCallItems *ci, int32 item_id)
{
	Datum		key;

	if (ci->keys == NULL)
		return integer_datum(ci, item_id);
	Assert(item_id >= 1 && item_id <= ci->keys->n);
	key = ci->keys->keys[item_id - 1];
	if (ci->out_type == ci->keys->type || (ci->out_type == VARCHAROID && ci->keys->type == TEXTOID))
		return key;
	if (ci->keys->type == INT8OID)
		return integer_datum(ci, DatumGetInt64(key));
	if (ci->out_type == TEXTOID || ci->out_type == VARCHAROID)
	{
		Oid			output;
		bool		varlena;

		getTypeOutputInfo(ci->keys->type, &output, &varlena);
		return CStringGetTextDatum(OidOutputFunctionCall(output, key));
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("the items of model \"%s\" are %s, but this call answers %s",
					mtdpp_shown(ci->model_name), format_type_be(ci->keys->type),
					format_type_be(ci->out_type)),
			 errhint("Pass the basket as an array of %s, such as ARRAY[...]::%s[], for answers of that type.",
					 format_type_be(ci->keys->type), format_type_be(ci->keys->type))));
	pg_unreachable();
}

/*
 * Item ITEM_ID of the model, in the type the call answers, checked against
 * its domain, if any: the check's cache lives where CI's slot for it does,
 * not in a context a row may reset.
 */
Datum
mtdpp_item_datum(const MtdppCallItems *ci, int32 item_id)
{
	Datum		d = item_datum(ci, item_id);

	if (OidIsValid(ci->out_domain))
		domain_check(d, false, ci->out_domain, ci->domain_extra,
					 GetMemoryChunkContext(ci->domain_extra));
	return d;
}

/*
 * The items of argument ARG as they were given, in the type the call
 * answers, *N of them (mtdpp_score echoes them, known to the model or not).
 */
Datum *
mtdpp_items_given(const MtdppCallItems *ci, FunctionCallInfo fcinfo, int arg, const char *what, int *n)
{
	Oid			elem;
	ArrayType  *a = array_arg(ci, fcinfo, arg, what, &elem);
	Datum	   *d = array_datums(a, n);

	for (int i = 0; i < *n && elem != ci->out_type; i++)
	{
		if (integer_type(elem))
			d[i] = integer_datum(ci, integer_value(elem, d[i]));
		else if (ci->out_type == TEXTOID || ci->out_type == VARCHAROID)
		{
			Oid			output;
			bool		varlena;

			getTypeOutputInfo(elem, &output, &varlena);
			d[i] = CStringGetTextDatum(OidOutputFunctionCall(output, d[i]));
		}
		else
			(void) mtdpp_item_datum(ci, 1);	/* raises the mismatch */
	}
	return d;
}

/* Argument ARG, a single item, as text: for messages. */
char *
mtdpp_item_arg_text(FunctionCallInfo fcinfo, int arg)
{
	Oid			t = get_fn_expr_argtype(fcinfo->flinfo, arg);
	Oid			output;
	bool		varlena;

	if (!OidIsValid(t))
		t = INT4OID;
	if (t == UNKNOWNOID)
		return DatumGetCString(PG_GETARG_DATUM(arg));
	getTypeOutputInfo(t, &output, &varlena);
	return OidOutputFunctionCall(output, PG_GETARG_DATUM(arg));
}
