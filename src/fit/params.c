/*
 * fit/params.c
 *		Hyperparameters: one table of keys, from which come the defaults,
 *		parsing and checking of jsonb, the error hints, the JSON stored with a
 *		model, and mtdpp_hyperparameters(), the table users read.
 *
 * The table holds the keys the kinds share and each kind's own keys (its
 * MtdppKindRoutine.own_keys, whose values live in the kind's block of
 * MtdppParams).  Every key is checked against it with its type and range,
 * so a typo is an error whose hint lists the valid keys rather than a
 * setting silently ignored; so is a key the kind does not take (its own
 * keys, and those it lists), and a kind that chooses something on a
 * validation slice without one.  The resolved values (defaults included)
 * are stored with the model (the keys of every kind and those of its kind),
 * so a model row always says exactly how it was trained.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"

#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"
#include "shown.h"

PG_FUNCTION_INFO_V1(mtdpp_hyperparameters);

static const char *const target_names[] = {"random", "last", NULL};
static const char *const optimizer_names[] = {"adam", "momentum", NULL};
static const char *const loss_names[] = {"logistic", "softmax", NULL};

#define F(field) offsetof(MtdppParams, field)

/*
 * The keys the kinds share: those before the kinds' own keys, then those
 * after (the order of doc/hyperparameters.md's table and of the stored
 * JSON).  The kind's default is the list's (mtdpp_default_kind).
 */
static const MtdppParamKey shared_keys_before[] = {
	{"kind", MTDPP_PARAM_CHOICE, F(kind), 0, 0, 0, NULL, "a model kind", true,
	"model kind", false, MTDPP_KEY_EVERY_KIND},
	{"rank", MTDPP_PARAM_INT, F(rank), 32, 1, MTDPP_MAX_RANK, NULL, "an integer from 1 to 1024", true,
	"number of latent factors; null: chosen on validation baskets with l2 (multi-task kinds)", false, MTDPP_KEY_ACCEPTED},
	{"epochs", MTDPP_PARAM_INT, F(epochs), 30, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"maximum number of passes over the training baskets (at most 10 where an epoch is a sample of epoch_baskets and the kind weighs evidence)", false, MTDPP_KEY_ACCEPTED},
	{"target", MTDPP_PARAM_CHOICE, F(target), MTDPP_TARGET_RANDOM, 0, 0, target_names,
		"'random' or 'last'", true,
	"which item of a training basket is a target: any, or the last added (needs positions)", false, MTDPP_KEY_EVERY_KIND},
	{"seed", MTDPP_PARAM_INT64, F(seed), 0, (double) PG_INT64_MIN, (double) PG_INT64_MAX, NULL,
		"an integer from -9223372036854775808 to 9223372036854775807", true,
	"random seed", false, MTDPP_KEY_EVERY_KIND},
	{"verbose", MTDPP_PARAM_BOOL, F(verbose), 0, 0, 0, NULL, "true or false", false,
	"one NOTICE per epoch", false, MTDPP_KEY_EVERY_KIND},
	{"learning_rate", MTDPP_PARAM_REAL, F(learning_rate), 0.01, 1e-9, 10.0, NULL, "a number in (0, 10]", true,
	"step size"},
	{"lr_decay", MTDPP_PARAM_REAL, F(lr_decay), 0.95, 0.01, 1.0, NULL, "a number in [0.01, 1]", true,
	"learning rate multiplied by this after each epoch"},
	{"batch_size", MTDPP_PARAM_INT, F(batch_size), 64, 1, 1000000, NULL, "an integer from 1 to 1000000", true,
	"positive examples per minibatch"},
	{"negatives", MTDPP_PARAM_INT, F(negatives), 5, 1, 100, NULL, "an integer from 1 to 100", true,
	"negative examples (random items not in the basket) per positive"},
	{"positives", MTDPP_PARAM_INT, F(positives), 4, 0, 1000, NULL, "an integer from 0 (every item) to 1000", true,
	"positive examples (targets) drawn per basket and epoch, 0 = every item of the basket"},
	{"patience", MTDPP_PARAM_INT, F(patience), 4, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"epochs without validation gain before training stops"},
	{"l2", MTDPP_PARAM_REAL, F(l2), 1e-5, 0.0, 100.0, NULL, "a number in [0, 100]", true,
	"L2 regularisation of the factors, weighted by item rarity; null: chosen on validation baskets with the rank (multi-task kinds)"},
	{"l2_bias", MTDPP_PARAM_REAL, F(l2_bias), 1e-5, 0.0, 100.0, NULL, "a number in [0, 100]", true,
	"L2 regularisation of the item bias"},
	{"w", MTDPP_PARAM_LOG, F(log_w), 0.01, MTDPP_MIN_W, MTDPP_MAX_W, NULL, "a number in [1e-12, 1e12]", true,
	"scale w of P(y = 1) = 1 - exp(-w det K)"},
	{"init_scale", MTDPP_PARAM_REAL, F(init_scale), 0.1, 0.0, 10.0, NULL, "a number in [0, 10]", true,
	"scale of the random initial factors"},
	{"optimizer", MTDPP_PARAM_CHOICE, F(optimizer), MTDPP_OPT_ADAM, 0, 0, optimizer_names, "'adam' or 'momentum'", true,
	"'adam' or 'momentum' (the paper's)"},
	{"momentum", MTDPP_PARAM_REAL, F(momentum), 0.9, 0.0, 0.999, NULL, "a number in [0, 0.999]", true,
	"momentum of the 'momentum' optimizer"},
	{"validation_fraction", MTDPP_PARAM_REAL, F(validation_fraction), 0.1, 0.0, 0.5, NULL,
		"a number in [0, 0.5]", true,
	"share of the training baskets set aside for early stopping"},
	{"validation_baskets", MTDPP_PARAM_INT, F(validation_baskets), -1, -1, 1000000, NULL,
		"an integer from 0 to 1000000, or -1 (automatic)", true,
	"at most this many validation baskets; -1: automatic"},
	{"validation_candidates", MTDPP_PARAM_INT, F(validation_candidates), 1000, 0, PG_INT32_MAX, NULL,
		"an integer, 0 (every item) or more", true,
	"each validation basket's held-out item is ranked among a fixed random sample of this many items; 0: the whole catalog"},
	{"max_context", MTDPP_PARAM_INT, F(max_context), 24, 1, MTDPP_MAX_CONTEXT, NULL,
		"an integer from 1 to 100", true,
	"larger training contexts are subsampled to this many items"},
	{"epoch_baskets", MTDPP_PARAM_INT, F(epoch_baskets), 200000, 0, PG_INT32_MAX, NULL,
		"an integer, 0 (every basket) or more", true,
	"each epoch trains on a fresh random sample of about this many training baskets when there are more; 0: all of them"},
	{"loss", MTDPP_PARAM_CHOICE, F(loss), MTDPP_LOSS_SOFTMAX, 0, 0, loss_names, "'logistic' or 'softmax'", true,
	"'softmax' (each positive against its negatives) or 'logistic' (the paper's)"},
	{"negative_power", MTDPP_PARAM_REAL, F(negative_power), 0.0, 0.0, 2.0, NULL, "a number in [0, 2]", true,
	"negatives drawn with probability proportional to popularity^negative_power (0: uniform)"},
	{"max_neighbors", MTDPP_PARAM_INT, F(max_neighbors), MTDPP_DEFAULT_NEIGHBORS, 1, 1000000, NULL,
		"an integer from 1 to 1000000, or null (the kind's default)", true,
	"each item keeps its strongest weights to at most this many other items; null: the kind's default (for some, every co-occurring item while the lists fit in a model value)"},
};

static const MtdppParamKey shared_keys_after[] = {
	{"fits", MTDPP_PARAM_INT, F(fits), 1, 1, 32, NULL, "an integer from 1 to 32", true,
	"independent fits, seeds seed, seed + 1, ..., kept side by side (fits x rank at most 1024); a score is the mean of theirs; 1: one fit", true},
	{"warm_start", MTDPP_PARAM_TEXT, F(warm_start), 0, 0, 0, NULL, "the name of a model", true,
	"start from the active version of this model: items it knows keep their parameters, new items start fresh"},
	{"warm_learning_rate", MTDPP_PARAM_REAL, F(warm_learning_rate), -1, 1e-9, 10.0, NULL,
		"a number in (0, 10], or null (continue the schedule of the model started from)", true,
	"step size a warm start begins at; null: where the schedule of the model started from left off (learning_rate if given)"},
	{"warm_epochs", MTDPP_PARAM_INT, F(warm_epochs), 10, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"a warm start's epochs, unless epochs is given"},
	{"warm_patience", MTDPP_PARAM_INT, F(warm_patience), 2, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"a warm start's patience, unless patience is given"},
	{"warm_old_baskets", MTDPP_PARAM_REAL, F(warm_old_baskets), 3.0, 0.0, 1e6, NULL, "a number in [0, 1e6]", true,
	"an epoch of a warm start trains on every new basket and this many old ones per new one, drawn afresh; 0: every basket"},
};

/*
 * Every key, in order: the shared keys before, each kind's own keys (by the
 * kind's number), the shared keys after; with the kind that defines it
 * (-1: shared).  Made when first needed, from the table of kinds.
 */
#define MAX_KEYS 64				/* MtdppParams.given has a bit per key */
static const MtdppParamKey *param_keys[MAX_KEYS];
static int	key_owner[MAX_KEYS];
static size_t key_offset[MAX_KEYS]; /* of its field in MtdppParams */
static int	n_keys;

static void
add_key(const MtdppParamKey *key, int owner)
{
	if (n_keys == MAX_KEYS)
		elog(ERROR, "more than %d hyperparameter keys", MAX_KEYS);
	key_owner[n_keys] = owner;
	/* a kind's own key names its field within the kind's block */
	key_offset[n_keys] = owner < 0 ? key->offset :
		offsetof(MtdppParams, own) + sizeof(MtdppKindValues) * owner + key->offset;
	param_keys[n_keys++] = key;
}

static void
list_keys(void)
{
	if (n_keys > 0)
		return;
	for (int k = 0; k < lengthof(shared_keys_before); k++)
		add_key(&shared_keys_before[k], -1);
	for (int kind = 0; kind < MTDPP_N_KINDS; kind++)
	{
		const MtdppParamKey *own = mtdpp_kind_exists(kind) ? mtdpp_kind(kind)->own_keys : NULL;

		for (int k = 0; own != NULL && own[k].name != NULL; k++)
			add_key(&own[k], kind);
	}
	for (int k = 0; k < lengthof(shared_keys_after); k++)
		add_key(&shared_keys_after[k], -1);
}

static int
find_key_index(const char *name)
{
	list_keys();
	for (int k = 0; k < n_keys; k++)
		if (strcmp(param_keys[k]->name, name) == 0)
			return k;
	return -1;
}

/* the field of key K in P */
static char *
field_of(const MtdppParams *p, int k)
{
	return (char *) p + key_offset[k];
}

/*
 * Whether key K applies to KIND: a key of every kind, a kind's own, or one
 * the kind lists among its keys.  *IGNORED: whether KIND accepts it anyway
 * (rank and epochs, named arguments of mtdpp_train that a loop over kinds
 * may pass to every kind; the kinds without factors ignore them).
 */
static bool
key_applies(int k, MtdppKind kind, bool *ignored)
{
	const char *const *listed = mtdpp_kind(kind)->keys;

	*ignored = param_keys[k]->reach == MTDPP_KEY_ACCEPTED;
	if (param_keys[k]->reach == MTDPP_KEY_EVERY_KIND || key_owner[k] == (int) kind)
		return true;
	for (int i = 0; listed != NULL && listed[i] != NULL; i++)
		if (strcmp(listed[i], param_keys[k]->name) == 0)
			return true;
	return false;
}

/* Whether key NAME applies to KIND. */
bool
mtdpp_kind_takes(MtdppKind kind, const char *name)
{
	int			k = find_key_index(name);
	bool		ignored;

	return k >= 0 && key_applies(k, kind, &ignored);
}

/* The keys that apply to KIND, for a hint. */
static char *
keys_of_kind(MtdppKind kind)
{
	StringInfoData s;
	bool		ignored;

	initStringInfo(&s);
	list_keys();
	for (int k = 0; k < n_keys; k++)
		if (key_applies(k, kind, &ignored))
			appendStringInfo(&s, "%s%s", s.len > 0 ? ", " : "", param_keys[k]->name);
	return s.data;
}

/* Index of NAME among CHOICES, or -1. */
static int
choice_index(const char *const *choices, const char *name)
{
	for (int c = 0; choices[c] != NULL; c++)
		if (strcmp(choices[c], name) == 0)
			return c;
	return -1;
}

/* Stores VALUE (a number, a choice's index, a flag) into P's field for key K. */
static void
set_field(MtdppParams *p, int k, double value)
{
	const MtdppParamKey *key = param_keys[k];
	char	   *field = field_of(p, k);

	switch (key->type)
	{
		case MTDPP_PARAM_INT:
			*(int *) field = (int) value;
			break;
		case MTDPP_PARAM_INT64:
			*(int64 *) field = (int64) value;
			break;
		case MTDPP_PARAM_REAL:
			*(double *) field = value;
			break;
		case MTDPP_PARAM_LOG:
			*(double *) field = log(value);
			break;
		case MTDPP_PARAM_BOOL:
			*(bool *) field = value != 0;
			break;
		case MTDPP_PARAM_CHOICE:
			/* every enum of MtdppParams is int-sized */
			*(int *) field = (int) value;
			break;
		case MTDPP_PARAM_TEXT:
			field[0] = '\0';	/* the default; text is set by parsing */
			break;
	}
}

/* The value of key K in P, as set_field takes it. */
static double
get_field(const MtdppParams *p, int k)
{
	const MtdppParamKey *key = param_keys[k];
	const char *field = field_of(p, k);

	switch (key->type)
	{
		case MTDPP_PARAM_INT:
		case MTDPP_PARAM_CHOICE:
			return *(const int *) field;
		case MTDPP_PARAM_INT64:
			return (double) *(const int64 *) field;
		case MTDPP_PARAM_REAL:
			return *(const double *) field;
		case MTDPP_PARAM_LOG:
			return exp(*(const double *) field);
		case MTDPP_PARAM_BOOL:
			return *(const bool *) field;
		case MTDPP_PARAM_TEXT:
			return 0;
	}
	pg_unreachable();
}

static MtdppTarget
target_from_name(const char *name)
{
	int			t = choice_index(target_names, name);

	if (t < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown target \"%s\"", mtdpp_shown(name)),
				 errhint("Use target => 'random' (any item of a basket is held out) or 'last' (the last added, with a position column).")));
	return (MtdppTarget) t;
}

void
mtdpp_params_defaults(MtdppParams *p, MtdppKind kind)
{
	const MtdppKindDefault *defaults;

	memset(p, 0, sizeof(*p));
	list_keys();
	for (int k = 0; k < n_keys; k++)
		set_field(p, k, param_keys[k]->value);
	p->kind = kind;
	/* where the kind's defaults differ from the table's */
	defaults = mtdpp_kind(kind)->defaults;
	for (int d = 0; defaults != NULL && defaults[d].key != NULL; d++)
	{
		int			k = find_key_index(defaults[d].key);

		if (k < 0)
			elog(ERROR, "kind %s has a default for no key \"%s\"", mtdpp_kind_name(kind), defaults[d].key);
		set_field(p, k, defaults[d].value);
	}
}

static void
bad_value_expecting(const MtdppParamKey *key, const char *value, const char *expect)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("hyperparameter \"%s\" is %s, expected %s", key->name, value, expect),
			 errhint("SELECT * FROM mtdpp_hyperparameters() lists every key with its valid values; null gives the default.")));
}

static void
bad_value(const MtdppParamKey *key, const char *value)
{
	bad_value_expecting(key, value, key->expect);
}

/* The integer V given for KEY (MTDPP_PARAM_INT64), checked against the whole of int64. */
static int64
checked_int64(const MtdppParamKey *key, JsonbValue *v)
{
	Datum		num;

	if (v->type != jbvNumeric)
		bad_value(key, "not a number");
	num = NumericGetDatum(v->val.numeric);
	if (!DatumGetBool(DirectFunctionCall2(numeric_eq, num,
										  DirectFunctionCall2(numeric_trunc, num, Int32GetDatum(0)))))
		bad_value(key, psprintf("%s, not a whole number", mtdpp_numeric_shown(v->val.numeric)));
	if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, num,
										  NumericGetDatum(int64_to_numeric(PG_INT64_MIN)))) < 0 ||
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, num,
										  NumericGetDatum(int64_to_numeric(PG_INT64_MAX)))) > 0)
		bad_value(key, mtdpp_numeric_shown(v->val.numeric));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, num));
}

/* The value V given for KEY, checked, as set_field takes it. */
static double
checked_value(const MtdppParamKey *key, JsonbValue *v)
{
	double		d;
	char	   *s;
	int			c;

	switch (key->type)
	{
		case MTDPP_PARAM_BOOL:
			if (v->type != jbvBool)
				bad_value(key, "not a boolean");
			return v->val.boolean;
		case MTDPP_PARAM_CHOICE:
			if (v->type != jbvString)
				bad_value(key, "not a string");
			s = pnstrdup(v->val.string.val, v->val.string.len);
			if (key->choices == NULL)
				return mtdpp_kind_from_name(s);
			if (key->choices == target_names)
				return target_from_name(s);
			c = choice_index(key->choices, s);
			if (c < 0)
				bad_value(key, psprintf("\"%s\"", mtdpp_shown(s)));
			return c;
		default:
			break;
	}
	if (v->type != jbvNumeric)
		bad_value(key, "not a number");
	/* beyond double precision: infinite (so out of range) or 0, not an error of its own */
	d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
										   NumericGetDatum(v->val.numeric)));
	if (!(d >= key->lo && d <= key->hi))
		bad_value(key, mtdpp_numeric_shown(v->val.numeric));
	if (key->type == MTDPP_PARAM_INT && d != floor(d))
		bad_value(key, "not a whole number");
	return d;
}

/* The kind JSON names, if it names one, else DEFAULT_KIND: for a hint. */
static MtdppKind
kind_named(Jsonb *json, MtdppKind default_kind)
{
	JsonbValue	key,
			   *v;

	key.type = jbvString;
	key.val.string.val = "kind";
	key.val.string.len = 4;
	v = findJsonbValueFromContainer(&json->root, JB_FOBJECT, &key);
	if (v == NULL || v->type != jbvString)
		return default_kind;
	for (int k = 0; k < MTDPP_N_KINDS; k++)
		if (mtdpp_kind_exists(k) &&
			strlen(mtdpp_kind_name((MtdppKind) k)) == v->val.string.len &&
			strncmp(mtdpp_kind_name((MtdppKind) k), v->val.string.val, v->val.string.len) == 0)
			return (MtdppKind) k;
	return default_kind;
}

/* Overlays the keys of JSON (an object) on P, checking each. */
void
mtdpp_params_parse(MtdppParams *p, Jsonb *json)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	const MtdppParamKey *key = NULL;
	int			key_index = -1;

	if (json == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(json))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hyperparameters must be a jsonb object"),
				 errhint("For example '{\"learning_rate\": 0.01, \"negatives\": 5}'.")));

	it = JsonbIteratorInit(&json->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			char	   *name = pnstrdup(v.val.string.val, v.val.string.len);

			key_index = find_key_index(name);
			key = key_index < 0 ? NULL : param_keys[key_index];
			if (key == NULL)
			{
				MtdppKind	kind = kind_named(json, p->kind);

				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown hyperparameter \"%s\"", mtdpp_shown(name)),
						 errhint("The keys of kind %s are %s.", mtdpp_kind_name(kind), keys_of_kind(kind))));
			}
			continue;
		}
		/* the kind decides every other key: a null there is a mistake, not a default */
		if (tok == WJB_VALUE && v.type == jbvNull && key_offset[key_index] == F(kind))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("hyperparameter \"kind\" is null, expected a model kind"),
					 errhint("Name a model kind, or leave \"kind\" out for the default kind.")));
		if (tok != WJB_VALUE || v.type == jbvNull)
			continue;			/* null means "the default" */
		p->given |= UINT64CONST(1) << key_index;
		if (key->type == MTDPP_PARAM_TEXT)
		{
			char	   *field = field_of(p, key_index);

			if (v.type != jbvString)
				bad_value(key, "not a string");
			if (v.val.string.len == 0 || v.val.string.len > MTDPP_NAME_MAX)
				bad_value_expecting(key, psprintf("a string of %d bytes", v.val.string.len),
									psprintf("%s of 1 to %d bytes", key->expect, MTDPP_NAME_MAX));
			memcpy(field, v.val.string.val, v.val.string.len);
			field[v.val.string.len] = '\0';
			continue;
		}
		if (key->type == MTDPP_PARAM_INT64)
		{
			*(int64 *) field_of(p, key_index) = checked_int64(key, &v);
			continue;
		}
		set_field(p, key_index, checked_value(key, &v));
	}
	/* the baselines have no factors, whatever rank was asked */
	if (!mtdpp_kind(p->kind)->factors)
		p->rank = 0;
}

/*
 * What a fit of P chooses on its validation slice, or NULL: what the kind
 * says (MtdppKindRoutine.chooses), else the rank and L2 of a kind with
 * factors when neither is given (and no warm start keeps its model's).
 * *INSTEAD: how to train without a slice, if at all.
 */
static const char *
chosen_on_validation(const MtdppParams *p, const char **instead)
{
	const MtdppKindRoutine *kind = mtdpp_kind(p->kind);

	*instead = "";
	if (kind->chooses != NULL)
		return kind->chooses(p, instead);
	*instead = ", or give rank => ... to train without a validation slice";
	if (kind->factors && p->rank == MTDPP_RANK_CHOSEN && p->warm_start[0] == '\0')
		return "chooses its rank and l2 on the validation baskets when neither is given";
	return NULL;
}

/*
 * Every key given applies to the kind, and a kind that chooses something on
 * a validation slice keeps one.
 */
static void
check_scopes(const MtdppParams *p)
{
	const char *kind = mtdpp_kind_name(p->kind);
	const char *chooses,
			   *instead,
			   *none;

	for (int k = 0; k < n_keys; k++)
	{
		bool		ignored;

		if ((p->given & (UINT64CONST(1) << k)) &&
			!key_applies(k, p->kind, &ignored) && !ignored)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("hyperparameter \"%s\" does not apply to kind %s", param_keys[k]->name, kind),
					 errhint("Leave it out. The keys of kind %s are %s.", kind, keys_of_kind(p->kind))));
	}
	chooses = chosen_on_validation(p, &instead);
	none = p->validation_fraction == 0.0 ? "validation_fraction" :
		p->validation_baskets == 0 ? "validation_baskets" : NULL;
	if (chooses != NULL && none != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s 0 leaves kind %s no validation slice", none, kind),
				 errdetail("Kind %s %s.", kind, chooses),
				 errhint("Leave %s out (by default a tenth of the training baskets, at most 1000)%s.",
						 none, instead)));
}

/* Defaults of the kind JSON names (the default kind if none), then its keys. */
void
mtdpp_params_resolve(MtdppParams *p, Jsonb *json)
{
	mtdpp_params_defaults(p, mtdpp_default_kind());
	mtdpp_params_parse(p, json);
	if (p->kind != mtdpp_default_kind())
	{
		MtdppKind	kind = p->kind;

		mtdpp_params_defaults(p, kind);
		mtdpp_params_parse(p, json);
	}
	mtdpp_capacity_resolve(p);
	check_scopes(p);

	/*
	 * A single-kernel DPP trained on swapped baskets has one score per
	 * example, over which a softmax is constant: it would learn nothing.
	 */
	if (p->loss == MTDPP_LOSS_SOFTMAX && mtdpp_kind_takes(p->kind, "loss") &&
		!mtdpp_kind(p->kind)->task_factors && !mtdpp_kind(p->kind)->likelihood &&
		!mtdpp_kind(p->kind)->bilinear)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the kind %s cannot be trained with the softmax loss",
						mtdpp_kind_name(p->kind)),
				 errdetail("Each of its examples is one basket with one score, over which a softmax is constant."),
				 errhint("Leave \"loss\" out (its default for %s is \"logistic\").",
						 mtdpp_kind_name(p->kind))));
}

/* The value of key K in P as JSON. */
static void
append_json_value(StringInfo s, const MtdppParams *p, int k)
{
	const MtdppParamKey *key = param_keys[k];
	double		d = get_field(p, k);

	switch (key->type)
	{
		case MTDPP_PARAM_INT:
			/* a negative default below the range: automatic, as null */
			if (d < key->lo && d < 0)
				appendStringInfoString(s, "null");
			else
				appendStringInfo(s, "%d", (int) d);
			break;
		case MTDPP_PARAM_INT64:
			appendStringInfo(s, INT64_FORMAT, *(const int64 *) field_of(p, k));
			break;
		case MTDPP_PARAM_REAL:
			/* a default below the range: chosen from the data, not given */
			if (d < key->lo)
				appendStringInfoString(s, "null");
			else
				appendStringInfo(s, "%.15g", d);
			break;
		case MTDPP_PARAM_LOG:
			appendStringInfo(s, "%.15g", d);
			break;
		case MTDPP_PARAM_BOOL:
			appendStringInfoString(s, d != 0 ? "true" : "false");
			break;
		case MTDPP_PARAM_CHOICE:
			escape_json(s, key->choices ? key->choices[(int) d] : mtdpp_kind_name((MtdppKind) d));
			break;
		case MTDPP_PARAM_TEXT:
			{
				const char *text = field_of(p, k);

				if (text[0] == '\0')
					appendStringInfoString(s, "null");
				else
					escape_json(s, text);
			}
			break;
	}
}

/*
 * What depends on the data: validation ranks each held-out item among the
 * candidates, by default in 1000 baskets, fewer when there are many
 * candidates (about 2 million candidates in all).
 */
void
mtdpp_params_for_data(MtdppParams *p, int n_items)
{
	if (p->validation_baskets < 0)
	{
		int			candidates = n_items;

		if (p->validation_candidates > 0)
			candidates = Min(candidates, p->validation_candidates);
		p->validation_baskets = Min(1000, Max(200, 2000000 / Max(candidates, 1)));
	}
}

/* Whether the caller set key NAME (to a value other than null). */
bool
mtdpp_param_given(const MtdppParams *p, const char *name)
{
	int			k = find_key_index(name);

	if (k < 0)
		elog(ERROR, "unknown hyperparameter key \"%s\"", name);
	return (p->given & (UINT64CONST(1) << k)) != 0;
}

/* The value of the integer key NAME in P. */
int
mtdpp_param_int(const MtdppParams *p, const char *name)
{
	int			k = find_key_index(name);

	if (k < 0 || param_keys[k]->type != MTDPP_PARAM_INT)
		elog(ERROR, "no integer hyperparameter key \"%s\"", name);
	return (int) get_field(p, k);
}

/*
 * Appends to S the stored keys of P that P's kind takes and kind BESIDE
 * does not (BESIDE < 0: every key P's kind takes), each as "key": value
 * after a ", " unless it is the first.
 */
static void
append_keys(StringInfo s, const MtdppParams *p, int beside, bool first)
{
	list_keys();
	for (int k = 0; k < n_keys; k++)
	{
		bool		ignored;

		/* the keys of every kind and those of P's kind, no other kind's */
		if (!param_keys[k]->stored || !key_applies(k, p->kind, &ignored) ||
			(beside >= 0 && key_applies(k, (MtdppKind) beside, &ignored)) ||
			(param_keys[k]->unless_default && get_field(p, k) == param_keys[k]->value))
			continue;
		appendStringInfo(s, "%s\"%s\": ", first ? "" : ", ", param_keys[k]->name);
		append_json_value(s, p, k);
		first = false;
	}
}

/* The hyperparams a model of P stores: the keys of every kind and of P's kind. */
char *
mtdpp_params_to_json(const MtdppParams *p)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	append_keys(&s, p, -1, true);
	appendStringInfoChar(&s, '}');
	return s.data;
}

/*
 * The keys P's kind takes and kind BESIDE does not, as members to append to
 * the hyperparams of a fit of kind BESIDE (", \"key\": value" each): a kind
 * whose model is made by another kind's fit stores its own keys too.
 */
char *
mtdpp_params_json_beyond(const MtdppParams *p, MtdppKind beside)
{
	StringInfoData s;

	initStringInfo(&s);
	append_keys(&s, p, beside, false);
	return s.data;
}

/*
 * mtdpp_hyperparameters(kind): the keys KIND takes, with their type, their
 * default for KIND, their range and what they do.
 */
Datum
mtdpp_hyperparameters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MtdppParams p;
	static const char *const type_names[] = {
		[MTDPP_PARAM_INT] = "integer",[MTDPP_PARAM_INT64] = "integer",[MTDPP_PARAM_REAL] = "number",
		[MTDPP_PARAM_LOG] = "number",[MTDPP_PARAM_BOOL] = "boolean",[MTDPP_PARAM_CHOICE] = "string",
		[MTDPP_PARAM_TEXT] = "string"
	};

	mtdpp_params_defaults(&p, PG_ARGISNULL(0) ? mtdpp_default_kind() :
						  mtdpp_kind_from_name(text_to_cstring(PG_GETARG_TEXT_PP(0))));
	InitMaterializedSRF(fcinfo, 0);
	list_keys();
	for (int k = 0; k < n_keys; k++)
	{
		const MtdppParamKey *key = param_keys[k];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		StringInfoData def;
		bool		ignored;

		if (!key_applies(k, p.kind, &ignored))
			continue;
		initStringInfo(&def);
		append_json_value(&def, &p, k);
		values[0] = CStringGetTextDatum(key->name);
		values[1] = CStringGetTextDatum(type_names[key->type]);
		values[2] = CStringGetTextDatum(def.data);
		values[3] = CStringGetTextDatum(key->expect);
		values[4] = CStringGetTextDatum(key->description);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}
