/*
 * train/params.c
 *		Hyperparameters: one table of keys, from which come the defaults,
 *		parsing and checking of jsonb, the error hints, the JSON stored with a
 *		model, and mtdpp_hyperparameters(), the table users read.
 *
 * Every key is checked against the table with its type and range, so a typo
 * is an error whose hint lists the valid keys rather than a setting silently
 * ignored; so is a key the kind does not use (key_scopes), and a kind that
 * chooses something on a validation slice without one.  The resolved values (defaults included) are stored with the
 * model, so a model row always says exactly how it was trained.
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

#include "kinds/kinds.h"
#include "model/model.h"
#include "train/params.h"

PG_FUNCTION_INFO_V1(mtdpp_hyperparameters);

typedef enum ParamType
{
	PARAM_INT,					/* int field */
	PARAM_INT64,				/* int64 field */
	PARAM_REAL,					/* double field */
	PARAM_LOG,					/* double field holding the log of the value */
	PARAM_BOOL,					/* bool field */
	PARAM_CHOICE,				/* enum field: the index of one of CHOICES */
	PARAM_TEXT					/* char[] field of MTDPP_NAME_MAX + 1 bytes, "" by default */
} ParamType;

typedef struct ParamKey
{
	const char *name;
	ParamType	type;
	size_t		offset;			/* of the field in MtdppParams */
	double		value;			/* default (for PARAM_LOG, the value itself) */
	double		lo,
				hi;				/* range, for numbers */
	const char *const *choices; /* PARAM_CHOICE: names, NULL-terminated;
								 * NULL for the kind, named by kinds.c */
	const char *expect;			/* what an error says a valid value is */
	bool		stored;			/* written into the model's hyperparams */
	const char *description;
	bool		unless_default; /* stored only when not its default (fits) */
} ParamKey;

static const char *const target_names[] = {"random", "last", NULL};
static const char *const optimizer_names[] = {"adam", "momentum", NULL};
static const char *const loss_names[] = {"logistic", "softmax", NULL};
static const char *const ease_solver_names[] = {"auto", "exact", "neighborhood", NULL};

#define F(field) offsetof(MtdppParams, field)

/* In the order of doc/hyperparameters.md's table and of the stored JSON. */
static const ParamKey param_keys[] = {
	{"kind", PARAM_CHOICE, F(kind), MTDPP_DEFAULT_KIND, 0, 0, NULL, "a model kind", true,
	"model kind"},
	{"rank", PARAM_INT, F(rank), 32, 1, MTDPP_MAX_RANK, NULL, "an integer from 1 to 1024", true,
	"number of latent factors; null: chosen on validation baskets with l2 (multi-task kinds)"},
	{"epochs", PARAM_INT, F(epochs), 30, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"maximum number of passes over the training baskets (hybrid: at most 10 where an epoch is a sample, epoch_baskets)"},
	{"target", PARAM_CHOICE, F(target), MTDPP_TARGET_RANDOM, 0, 0, target_names,
		"'random' or 'last'", true,
	"which item of a training basket is a target: any, or the last added (needs positions)"},
	{"seed", PARAM_INT64, F(seed), 0, (double) PG_INT64_MIN, (double) PG_INT64_MAX, NULL,
		"an integer from -9223372036854775808 to 9223372036854775807", true,
	"random seed"},
	{"verbose", PARAM_BOOL, F(verbose), 0, 0, 0, NULL, "true or false", false,
	"one NOTICE per epoch"},
	{"learning_rate", PARAM_REAL, F(learning_rate), 0.01, 1e-9, 10.0, NULL, "a number in (0, 10]", true,
	"step size"},
	{"lr_decay", PARAM_REAL, F(lr_decay), 0.95, 0.01, 1.0, NULL, "a number in [0.01, 1]", true,
	"learning rate multiplied by this after each epoch"},
	{"batch_size", PARAM_INT, F(batch_size), 64, 1, 1000000, NULL, "an integer from 1 to 1000000", true,
	"positive examples per minibatch"},
	{"negatives", PARAM_INT, F(negatives), 5, 1, 100, NULL, "an integer from 1 to 100", true,
	"negative examples (random items not in the basket) per positive"},
	{"positives", PARAM_INT, F(positives), 4, 0, 1000, NULL, "an integer from 0 (every item) to 1000", true,
	"positive examples (targets) drawn per basket and epoch, 0 = every item of the basket"},
	{"patience", PARAM_INT, F(patience), 4, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"epochs without validation gain before training stops"},
	{"l2", PARAM_REAL, F(l2), 1e-5, 0.0, 100.0, NULL, "a number in [0, 100]", true,
	"L2 regularisation of the factors, weighted by item rarity; null: chosen on validation baskets with the rank (multi-task kinds)"},
	{"l2_bias", PARAM_REAL, F(l2_bias), 1e-5, 0.0, 100.0, NULL, "a number in [0, 100]", true,
	"L2 regularisation of the item bias"},
	{"w", PARAM_LOG, F(log_w), 0.01, MTDPP_MIN_W, MTDPP_MAX_W, NULL, "a number in [1e-12, 1e12]", true,
	"scale w of P(y = 1) = 1 - exp(-w det K)"},
	{"init_scale", PARAM_REAL, F(init_scale), 0.1, 0.0, 10.0, NULL, "a number in [0, 10]", true,
	"scale of the random initial factors"},
	{"optimizer", PARAM_CHOICE, F(optimizer), MTDPP_OPT_ADAM, 0, 0, optimizer_names, "'adam' or 'momentum'", true,
	"'adam' or 'momentum' (the paper's)"},
	{"momentum", PARAM_REAL, F(momentum), 0.9, 0.0, 0.999, NULL, "a number in [0, 0.999]", true,
	"momentum of the 'momentum' optimizer"},
	{"validation_fraction", PARAM_REAL, F(validation_fraction), 0.1, 0.0, 0.5, NULL,
		"a number in [0, 0.5]", true,
	"share of the training baskets set aside for early stopping"},
	{"validation_baskets", PARAM_INT, F(validation_baskets), -1, -1, 1000000, NULL,
		"an integer from 0 to 1000000, or -1 (automatic)", true,
	"at most this many validation baskets; -1: automatic"},
	{"validation_candidates", PARAM_INT, F(validation_candidates), 1000, 0, PG_INT32_MAX, NULL,
		"an integer, 0 (every item) or more", true,
	"each validation basket's held-out item is ranked among a fixed random sample of this many items; 0: the whole catalog"},
	{"max_context", PARAM_INT, F(max_context), 24, 1, MTDPP_MAX_CONTEXT, NULL,
		"an integer from 1 to 100", true,
	"larger training contexts are subsampled to this many items"},
	{"epoch_baskets", PARAM_INT, F(epoch_baskets), 200000, 0, PG_INT32_MAX, NULL,
		"an integer, 0 (every basket) or more", true,
	"each epoch trains on a fresh random sample of about this many training baskets when there are more; 0: all of them"},
	{"loss", PARAM_CHOICE, F(loss), MTDPP_LOSS_SOFTMAX, 0, 0, loss_names, "'logistic' or 'softmax'", true,
	"'softmax' (each positive against its negatives) or 'logistic' (the paper's)"},
	{"negative_power", PARAM_REAL, F(negative_power), 0.0, 0.0, 2.0, NULL, "a number in [0, 2]", true,
	"negatives drawn with probability proportional to popularity^negative_power (0: uniform)"},
	{"lambda", PARAM_REAL, F(lambda), -1, 0.0, 1e12, NULL, "a number in [0, 1e12], or null (chosen on validation baskets)", true,
	"ease: L2 regularisation of the item-item weights, (X^T X + lambda I)^-1; null: chosen on validation baskets, relative to the mean item popularity"},
	{"ease_solver", PARAM_CHOICE, F(ease_solver), MTDPP_EASE_AUTO, 0, 0, ease_solver_names,
		"'auto', 'exact' or 'neighborhood'", true,
	"ease, hybrid: how EASE's weights are fitted: 'exact' inverts X^T X + lambda I (the catalog cubed), 'neighborhood' solves each item's regression on its co-occurring items (linear in the catalog); 'auto': exact up to 8,000 items"},
	{"ease_dropout", PARAM_REAL, F(ease_dropout), 0.0, 0.0, 0.9, NULL, "a number in [0, 0.9], or null", true,
	"ease, hybrid: EASE's weights fitted as if each item of a basket were dropped with this probability, which regularises each item's weights by lambda plus dropout / (1 - dropout) times its popularity; 0: EASE itself (ease's default); null (hybrid's): 0.5 where the weights are fitted exactly, 0 on neighbourhoods"},
	{"max_neighbors", PARAM_INT, F(max_neighbors), MTDPP_EASE_NEIGHBORS, 1, 1000000, NULL,
		"an integer from 1 to 1000000, or null (the kind's default)", true,
	"each item keeps its strongest weights to at most this many other items; null (itemknn, hybrid): all, unless the lists would outgrow a model value"},
	{"min_support", PARAM_REAL, F(min_support), -1, 1e-9, 1.0, NULL,
		"a number in (0, 1], or null (chosen on validation baskets)", true,
	"rules: share of the training baskets holding a rule's antecedent and consequent, at least; null: chosen on validation baskets"},
	{"min_confidence", PARAM_REAL, F(min_confidence), -1, 0.0, 1.0, NULL,
		"a number in [0, 1], or null (chosen on validation baskets)", true,
	"rules: share of the baskets holding a rule's antecedent that hold its consequent, at least; null: chosen on validation baskets"},
	{"max_antecedent", PARAM_INT, F(max_antecedent), -1, 1, 3, NULL,
		"an integer from 1 to 3, or null (chosen on validation baskets)", true,
	"rules: items of a rule's antecedent, at most; null: chosen on validation baskets"},
	{"a", PARAM_REAL, F(poisson_a), 0.3, 0.01, 100.0, NULL, "a number in [0.01, 100]", true, "poisson: shape of the Gamma prior of a basket's factors"},
	{"c", PARAM_REAL, F(poisson_c), -1, 0.01, 100.0, NULL, "a number in [0.01, 100], or null (chosen on validation baskets)", true, "poisson: shape of the Gamma prior of an item's factors; null: chosen on validation baskets"},
	{"samples", PARAM_INT, F(samples), 8, 1, 64, NULL, "an integer from 1 to 64", true, "bayesian_lowrank: posterior samples of the factors kept (samples x rank at most 1024); a score is their mean"},
	{"burn_in", PARAM_INT, F(burn_in), 1, 0, 1000, NULL, "an integer from 0 to 1000", true, "bayesian_lowrank: Langevin epochs from the posterior mode before the first sample is kept"},
	{"thinning", PARAM_INT, F(thinning), -1, 1, 1000000, NULL, "an integer from 1 to 1000000, or null", true, "bayesian_lowrank: Langevin steps between two samples kept; null: a quarter of an epoch's"},
	{"prior_precision", PARAM_REAL, F(prior_precision), -1, 1e-6, 1e6, NULL, "a number in [1e-6, 1e6], or null", true, "bayesian_lowrank: precision lambda of the Gaussian prior N(0, 1/lambda) on each factor; null: 1 / the mean square of the posterior mode's factors"},
	{"step_size", PARAM_REAL, F(step_size), -1, 1e-12, 1.0, NULL, "a number in [1e-12, 1], or null", true, "bayesian_lowrank: the first Langevin step, then times (1 + t/T)^-0.55 at step t (T: an epoch's steps); null: 1e-3, 1e-4 or 1e-5, the best on validation baskets"},
	{"fits", PARAM_INT, F(fits), 1, 1, 32, NULL, "an integer from 1 to 32", true,
	"multitask, multitask_nobias: independent fits, seeds seed, seed + 1, ..., kept side by side (fits x rank at most 1024); a score is the mean of theirs; 1: one fit", true},
	{"warm_start", PARAM_TEXT, F(warm_start), 0, 0, 0, NULL, "the name of a model", true,
	"start from the active version of this model: items it knows keep their parameters, new items start fresh"},
	{"warm_learning_rate", PARAM_REAL, F(warm_learning_rate), -1, 1e-9, 10.0, NULL,
		"a number in (0, 10], or null (continue the schedule of the model started from)", true,
	"step size a warm start begins at; null: where the schedule of the model started from left off (learning_rate if given)"},
	{"warm_epochs", PARAM_INT, F(warm_epochs), 10, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"a warm start's epochs, unless epochs is given"},
	{"warm_patience", PARAM_INT, F(warm_patience), 2, 1, 100000, NULL, "an integer from 1 to 100000", true,
	"a warm start's patience, unless patience is given"},
	{"warm_old_baskets", PARAM_REAL, F(warm_old_baskets), 3.0, 0.0, 1e6, NULL, "a number in [0, 1e6]", true,
	"an epoch of a warm start trains on every new basket and this many old ones per new one, drawn afresh; 0: every basket"},
};

StaticAssertDecl(lengthof(param_keys) <= 64, "MtdppParams.given has a bit per key");

/*
 * The kinds a key applies to.  Most keys steer the stochastic gradient of
 * the kinds with factors (SCOPE_FACTORS); the exceptions are listed here.  A
 * key given for a kind it does not apply to is an error rather than a
 * setting silently stored and ignored, but for rank and epochs, named
 * arguments of mtdpp_train that a loop over kinds may pass to every kind:
 * the kinds without factors ignore them, as they always have.
 */
typedef enum KeyScope
{
	SCOPE_FACTORS,				/* the kinds with factors trained by the stochastic gradient */
	SCOPE_FACTOR_COUNT,			/* the kinds with factors: their rank and passes */
	SCOPE_ALL,					/* every kind */
	SCOPE_VALIDATION,			/* the kinds that choose on a validation slice */
	SCOPE_EASE,					/* ease */
	SCOPE_RULES,				/* rules */
	SCOPE_POISSON,				/* poisson */
	SCOPE_BAYES,				/* bayesian_lowrank */
	SCOPE_EASE_WEIGHTS,			/* the kinds that fit EASE's weights: ease, hybrid */
	SCOPE_ENSEMBLE,				/* the kinds that keep several fits side by side */
	SCOPE_NEIGHBORS				/* the kinds with neighbour lists */
} KeyScope;

static const struct
{
	const char *name;
	KeyScope	scope;
	bool		ignored;		/* accepted (and ignored) by the other kinds */
}			key_scopes[] = {
	{"kind", SCOPE_ALL, false},
	{"target", SCOPE_ALL, false},
	{"seed", SCOPE_ALL, false},
	{"verbose", SCOPE_ALL, false},
	{"rank", SCOPE_FACTOR_COUNT, true},
	{"epochs", SCOPE_FACTOR_COUNT, true},
	{"validation_fraction", SCOPE_VALIDATION, false},
	{"validation_baskets", SCOPE_VALIDATION, false},
	{"validation_candidates", SCOPE_VALIDATION, false},
	{"max_context", SCOPE_VALIDATION, false},
	{"lambda", SCOPE_EASE, false},
	{"ease_solver", SCOPE_EASE_WEIGHTS, false},
	{"ease_dropout", SCOPE_EASE_WEIGHTS, false},
	{"max_neighbors", SCOPE_NEIGHBORS, false},
	{"min_support", SCOPE_RULES, false},
	{"min_confidence", SCOPE_RULES, false},
	{"max_antecedent", SCOPE_RULES, false},
	{"a", SCOPE_POISSON, false}, {"c", SCOPE_POISSON, false},
	{"samples", SCOPE_BAYES, false}, {"burn_in", SCOPE_BAYES, false}, {"thinning", SCOPE_BAYES, false},
	{"prior_precision", SCOPE_BAYES, false}, {"step_size", SCOPE_BAYES, false},
	{"fits", SCOPE_ENSEMBLE, false},
};

static const ParamKey *
find_key(const char *name)
{
	for (int k = 0; k < lengthof(param_keys); k++)
		if (strcmp(param_keys[k].name, name) == 0)
			return &param_keys[k];
	return NULL;
}

static char *
valid_keys(void)
{
	StringInfoData s;

	initStringInfo(&s);
	for (int k = 0; k < lengthof(param_keys); k++)
		appendStringInfo(&s, "%s%s", k > 0 ? ", " : "", param_keys[k].name);
	return s.data;
}

/* the kinds KEY applies to */
static KeyScope
key_scope(const ParamKey *key)
{
	for (int k = 0; k < lengthof(key_scopes); k++)
		if (strcmp(key_scopes[k].name, key->name) == 0)
			return key_scopes[k].scope;
	return SCOPE_FACTORS;
}

/* the keys of the stochastic gradient that steer gru's fit (gru_fit.c) */
static const char *const gru_keys[] = {
	"rank", "epochs", "learning_rate", "negatives", "negative_power", "patience", "l2",
	"init_scale", "epoch_baskets", NULL
};

/* Whether KEY applies to KIND; *IGNORED: whether KIND accepts it anyway. */
static bool
key_applies(const ParamKey *key, MtdppKind kind, bool *ignored)
{
	const MtdppKindRoutine *routine = mtdpp_kind(kind);
	KeyScope	scope = key_scope(key);

	*ignored = false;
	for (int k = 0; k < lengthof(key_scopes); k++)
		if (strcmp(key_scopes[k].name, key->name) == 0)
			*ignored = key_scopes[k].ignored;
	switch (scope)
	{
		case SCOPE_ALL:
			return true;
		case SCOPE_FACTORS:
			for (int k = 0; kind == MTDPP_GRU && gru_keys[k] != NULL; k++)
				if (strcmp(gru_keys[k], key->name) == 0)
					return true;
			/* but a warm start of bayesian_lowrank: samples side by side are no starting point */
			return routine->factors && kind != MTDPP_POISSON && kind != MTDPP_GRU &&
				(kind != MTDPP_BAYESIAN_LOWRANK || strncmp(key->name, "warm_", 5) != 0);
		case SCOPE_FACTOR_COUNT:
			return routine->factors;
		case SCOPE_VALIDATION:
			return routine->factors || kind == MTDPP_EASE || kind == MTDPP_RULES;
		case SCOPE_EASE:
			return kind == MTDPP_EASE;
		case SCOPE_RULES:
			return kind == MTDPP_RULES;
		case SCOPE_POISSON:
			return kind == MTDPP_POISSON;
		case SCOPE_BAYES:
			return kind == MTDPP_BAYESIAN_LOWRANK;
		case SCOPE_EASE_WEIGHTS:
			return kind == MTDPP_EASE || kind == MTDPP_HYBRID;
		case SCOPE_NEIGHBORS:
			return routine->neighbors && kind != MTDPP_RULES;
		case SCOPE_ENSEMBLE:
			return routine->ensemble;
	}
	pg_unreachable();
}

/* The keys that apply to KIND, for a hint. */
static char *
keys_of_kind(MtdppKind kind)
{
	StringInfoData s;
	bool		ignored;

	initStringInfo(&s);
	for (int k = 0; k < lengthof(param_keys); k++)
		if (key_applies(&param_keys[k], kind, &ignored))
			appendStringInfo(&s, "%s%s", s.len > 0 ? ", " : "", param_keys[k].name);
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

/* Stores VALUE (a number, a choice's index, a flag) into P's field for KEY. */
static void
set_field(MtdppParams *p, const ParamKey *key, double value)
{
	char	   *field = (char *) p + key->offset;

	switch (key->type)
	{
		case PARAM_INT:
			*(int *) field = (int) value;
			break;
		case PARAM_INT64:
			*(int64 *) field = (int64) value;
			break;
		case PARAM_REAL:
			*(double *) field = value;
			break;
		case PARAM_LOG:
			*(double *) field = log(value);
			break;
		case PARAM_BOOL:
			*(bool *) field = value != 0;
			break;
		case PARAM_CHOICE:
			/* every enum of MtdppParams is int-sized */
			*(int *) field = (int) value;
			break;
		case PARAM_TEXT:
			field[0] = '\0';	/* the default; text is set by parsing */
			break;
	}
}

/* The value of KEY in P, as set_field takes it. */
static double
get_field(const MtdppParams *p, const ParamKey *key)
{
	const char *field = (const char *) p + key->offset;

	switch (key->type)
	{
		case PARAM_INT:
		case PARAM_CHOICE:
			return *(const int *) field;
		case PARAM_INT64:
			return (double) *(const int64 *) field;
		case PARAM_REAL:
			return *(const double *) field;
		case PARAM_LOG:
			return exp(*(const double *) field);
		case PARAM_BOOL:
			return *(const bool *) field;
		case PARAM_TEXT:
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
	for (int k = 0; k < lengthof(param_keys); k++)
		set_field(p, &param_keys[k], param_keys[k].value);
	p->kind = kind;
	/* where the kind's defaults differ from the table's */
	defaults = mtdpp_kind(kind)->defaults;
	for (int d = 0; defaults != NULL && defaults[d].key != NULL; d++)
		set_field(p, find_key(defaults[d].key), defaults[d].value);
}

static void
bad_value_expecting(const ParamKey *key, const char *value, const char *expect)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("hyperparameter \"%s\" is %s, expected %s", key->name, value, expect),
			 errhint("SELECT * FROM mtdpp_hyperparameters() lists every key with its valid values; null gives the default.")));
}

static void
bad_value(const ParamKey *key, const char *value)
{
	bad_value_expecting(key, value, key->expect);
}

/* The integer V given for KEY (PARAM_INT64), checked against the whole of int64. */
static int64
checked_int64(const ParamKey *key, JsonbValue *v)
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
checked_value(const ParamKey *key, JsonbValue *v)
{
	double		d;
	char	   *s;
	int			c;

	switch (key->type)
	{
		case PARAM_BOOL:
			if (v->type != jbvBool)
				bad_value(key, "not a boolean");
			return v->val.boolean;
		case PARAM_CHOICE:
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
	if (key->type == PARAM_INT && d != floor(d))
		bad_value(key, "not a whole number");
	return d;
}

/* Overlays the keys of JSON (an object) on P, checking each. */
void
mtdpp_params_parse(MtdppParams *p, Jsonb *json)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	const ParamKey *key = NULL;

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

			key = find_key(name);
			if (key == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown hyperparameter \"%s\"", mtdpp_shown(name)),
						 errhint("Valid keys are %s.", valid_keys())));
			continue;
		}
		if (tok != WJB_VALUE || v.type == jbvNull)
			continue;			/* null means "the default" */
		p->given |= UINT64CONST(1) << (key - param_keys);
		if (key->type == PARAM_TEXT)
		{
			char	   *field = (char *) p + key->offset;

			if (v.type != jbvString)
				bad_value(key, "not a string");
			if (v.val.string.len == 0 || v.val.string.len > MTDPP_NAME_MAX)
				bad_value_expecting(key, psprintf("a string of %d bytes", v.val.string.len),
									psprintf("%s of 1 to %d bytes", key->expect, MTDPP_NAME_MAX));
			memcpy(field, v.val.string.val, v.val.string.len);
			field[v.val.string.len] = '\0';
			continue;
		}
		if (key->type == PARAM_INT64)
		{
			*(int64 *) ((char *) p + key->offset) = checked_int64(key, &v);
			continue;
		}
		set_field(p, key, checked_value(key, &v));
	}
	/* the baselines have no factors, whatever rank was asked */
	if (!mtdpp_kind(p->kind)->factors)
		p->rank = 0;
}

/*
 * What a fit of P chooses on its validation slice, or NULL: the kind
 * hybrid its evidence weights, the multi-task kinds their rank and L2 when
 * neither is given (and no warm start keeps its model's), ease its lambda
 * when it is not given.  *INSTEAD: how to train without a slice, if at all.
 */
static const char *
chosen_on_validation(const MtdppParams *p, const char **instead)
{
	*instead = "";
	if (p->kind == MTDPP_HYBRID)
		return "weighs its co-occurrence evidence on the validation baskets";
	*instead = ", or give rank => ... and \"c\" to train without a validation slice";
	if (p->kind == MTDPP_POISSON && (p->rank == MTDPP_RANK_CHOSEN || p->poisson_c < 0.0))
		return "chooses its rank and the prior shape c not given on the validation baskets";
	*instead = ", or give rank => ... and \"learning_rate\" to train without a validation slice";
	if (p->kind == MTDPP_GRU && (p->rank == MTDPP_RANK_CHOSEN || !mtdpp_param_given(p, "learning_rate")))
		return "chooses its hidden size (rank) and learning_rate on the validation baskets when they are not given";
	*instead = ", or give rank => ... to train without a validation slice";
	if (mtdpp_kind(p->kind)->factors && p->rank == MTDPP_RANK_CHOSEN && p->warm_start[0] == '\0')
		return "chooses its rank and l2 on the validation baskets when neither is given";
	*instead = ", or give \"lambda\" to train without a validation slice";
	if (p->kind == MTDPP_EASE && p->lambda < 0.0)
		return "chooses its lambda on the validation baskets when it is not given";
	*instead = ", or give \"min_support\", \"min_confidence\" and \"max_antecedent\" to train without a validation slice";
	if (p->kind == MTDPP_RULES &&
		(p->min_support < 0.0 || p->min_confidence < 0.0 || p->max_antecedent < 0))
		return "chooses the thresholds not given on the validation baskets";
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

	for (int k = 0; k < lengthof(param_keys); k++)
	{
		bool		ignored;

		if ((p->given & (UINT64CONST(1) << k)) &&
			!key_applies(&param_keys[k], p->kind, &ignored) && !ignored)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("hyperparameter \"%s\" does not apply to kind %s", param_keys[k].name, kind),
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
	mtdpp_params_defaults(p, MTDPP_DEFAULT_KIND);
	mtdpp_params_parse(p, json);
	if (p->kind != MTDPP_DEFAULT_KIND)
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
	if (p->loss == MTDPP_LOSS_SOFTMAX && mtdpp_kind(p->kind)->factors &&
		p->kind != MTDPP_POISSON && !mtdpp_kind(p->kind)->task_factors && !mtdpp_kind(p->kind)->likelihood &&
		!mtdpp_kind(p->kind)->bilinear)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the kind %s cannot be trained with the softmax loss",
						mtdpp_kind_name(p->kind)),
				 errdetail("Each of its examples is one basket with one score, over which a softmax is constant."),
				 errhint("Leave \"loss\" out (its default for %s is \"logistic\").",
						 mtdpp_kind_name(p->kind))));
}

/* KEY's value in P as JSON. */
static void
append_json_value(StringInfo s, const MtdppParams *p, const ParamKey *key)
{
	double		d = get_field(p, key);

	switch (key->type)
	{
		case PARAM_INT:
			/* a negative default below the range: automatic, as null */
			if (d < key->lo && d < 0)
				appendStringInfoString(s, "null");
			else
				appendStringInfo(s, "%d", (int) d);
			break;
		case PARAM_INT64:
			appendStringInfo(s, INT64_FORMAT, *(const int64 *) ((const char *) p + key->offset));
			break;
		case PARAM_REAL:
			/* a default below the range: chosen from the data, not given */
			if (d < key->lo)
				appendStringInfoString(s, "null");
			else
				appendStringInfo(s, "%.15g", d);
			break;
		case PARAM_LOG:
			appendStringInfo(s, "%.15g", d);
			break;
		case PARAM_BOOL:
			appendStringInfoString(s, d != 0 ? "true" : "false");
			break;
		case PARAM_CHOICE:
			escape_json(s, key->choices ? key->choices[(int) d] : mtdpp_kind_name((MtdppKind) d));
			break;
		case PARAM_TEXT:
			{
				const char *text = (const char *) p + key->offset;

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
	const ParamKey *key = find_key(name);

	if (key == NULL)
		elog(ERROR, "unknown hyperparameter key \"%s\"", name);
	return (p->given & (UINT64CONST(1) << (key - param_keys))) != 0;
}

char *
mtdpp_params_to_json(const MtdppParams *p)
{
	StringInfoData s;
	bool		first = true;

	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	for (int k = 0; k < lengthof(param_keys); k++)
	{
		if (!param_keys[k].stored ||
			(param_keys[k].unless_default && get_field(p, &param_keys[k]) == param_keys[k].value))
			continue;
		appendStringInfo(&s, "%s\"%s\": ", first ? "" : ", ", param_keys[k].name);
		append_json_value(&s, p, &param_keys[k]);
		first = false;
	}
	appendStringInfoChar(&s, '}');
	return s.data;
}

/*
 * mtdpp_hyperparameters(kind): every key, with its type, its default for
 * KIND, its range and what it does.
 */
Datum
mtdpp_hyperparameters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MtdppParams p;
	static const char *const type_names[] = {
		[PARAM_INT] = "integer",[PARAM_INT64] = "integer",[PARAM_REAL] = "number",
		[PARAM_LOG] = "number",[PARAM_BOOL] = "boolean",[PARAM_CHOICE] = "string",
		[PARAM_TEXT] = "string"
	};

	mtdpp_params_defaults(&p, PG_ARGISNULL(0) ? MTDPP_DEFAULT_KIND :
						  mtdpp_kind_from_name(text_to_cstring(PG_GETARG_TEXT_PP(0))));
	InitMaterializedSRF(fcinfo, 0);
	for (int k = 0; k < lengthof(param_keys); k++)
	{
		const ParamKey *key = &param_keys[k];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		StringInfoData def;

		initStringInfo(&def);
		append_json_value(&def, &p, key);
		values[0] = CStringGetTextDatum(key->name);
		values[1] = CStringGetTextDatum(type_names[key->type]);
		values[2] = CStringGetTextDatum(def.data);
		values[3] = CStringGetTextDatum(key->expect);
		values[4] = CStringGetTextDatum(key->description);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}
