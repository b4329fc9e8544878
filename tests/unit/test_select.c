#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/registry.h"
#include "rm/util.h"

#define ENTRY(name, tags)                                                                          \
	"{\"name\": \"" name "\", \"dockerfile\": \"docker/x\", \"scripts\": \"s/run.sh\", "       \
	"\"n_gpus\": \"1\", \"owner\": \"o\", \"tags\": [" tags "], \"args\": \"--base 1\"}"

static const char *top = "[" ENTRY("pyt_a", "\"training\", \"pyt\"") "," ENTRY(
    "pyt_b", "\"inference\", \"pyt\"") "," ENTRY("tf_c", "\"training\", \"tf\"") "]";
static const char *llm = "[" ENTRY("pyt_d", "\"training\"") "," ENTRY("pyt_a", "\"big\"") "]";

static void setup(rm_registry *reg)
{
	rm_error err = RM_ERROR_INIT;

	CHECK(rm_registry_load_buffer(reg, top, strlen(top), "models.json", NULL, ".", &err) == 0);
	CHECK(rm_registry_load_buffer(reg, llm, strlen(llm), "scripts/llm/models.json", "llm",
				      "scripts/llm", &err) == 0);
	CHECK(reg->n == 5);
}

/* Runs a selection and returns the picked names joined by ' ' ("" on error; err filled). */
static char *pick(const rm_registry *reg, const char *const *exprs, size_t n, rm_error *err,
		  rm_selection *keep)
{
	rm_selection sel = {NULL, 0};
	rm_buf b = RM_BUF_INIT(4096);

	if (rm_select(reg, exprs, n, &sel, err) == 0) {
		for (size_t i = 0; i < sel.n; i++)
			rm_buf_addf(&b, "%s%s", i ? " " : "", sel.items[i].model->name);
	} else {
		CHECK(sel.n == 0 && sel.items == NULL);
	}
	if (keep)
		*keep = sel;
	else
		rm_selection_release(&sel);
	return rm_buf_detach(&b);
}

#define CHECK_PICK(exprs, expect)                                                                  \
	do {                                                                                       \
		rm_error e_ = RM_ERROR_INIT;                                                       \
		char *got_ = pick(&reg, exprs, sizeof(exprs) / sizeof(exprs[0]), &e_, NULL);       \
		CHECK_STR(got_, expect);                                                           \
		free(got_);                                                                        \
	} while (0)

TEST(matching)
{
	rm_registry reg = {0};

	setup(&reg);
	const char *union_[] = {"training,inference"};
	CHECK_PICK(union_, "pyt_a pyt_b tf_c llm/pyt_d");
	const char *repeated[] = {"tf", "pyt_b"};
	CHECK_PICK(repeated, "pyt_b tf_c"); /* registry order, not tag order */
	const char *name[] = {"pyt_b"};
	CHECK_PICK(name, "pyt_b");
	const char *full[] = {"llm/pyt_d"};
	CHECK_PICK(full, "llm/pyt_d");
	/* madengine's rule: a scoped model's short name alone selects nothing (the error says
	 * which whole name to give); the same short name at the top level is that model. */
	const char *short_[] = {"pyt_d"};
	rm_error se = RM_ERROR_INIT;
	char *got_short = pick(&reg, short_, 1, &se, NULL);
	CHECK_STR(got_short, "");
	free(got_short);
	CHECK(strstr(se.msg, "no model matches tag 'pyt_d' (names are whole, as in madengine: "
			     "the model is 'llm/pyt_d', give --tags llm/pyt_d)") != NULL);
	const char *short_both[] = {"pyt_a"};
	CHECK_PICK(short_both, "pyt_a");
	const char *all[] = {"all"};
	CHECK_PICK(all, "pyt_a pyt_b tf_c llm/pyt_d llm/pyt_a");
	const char *scoped[] = {"llm/training"};
	CHECK_PICK(scoped, "llm/pyt_d");
	const char *scoped_name[] = {"llm/pyt_a"};
	CHECK_PICK(scoped_name, "llm/pyt_a");
	const char *scoped_all[] = {"llm/all"};
	CHECK_PICK(scoped_all, "llm/pyt_d llm/pyt_a");
	const char *once[] = {"pyt,pyt_a,training", "pyt_a"};
	CHECK_PICK(once, "pyt_a pyt_b tf_c llm/pyt_d");
	const char *blanks[] = {" pyt_b , ,  ", ""};
	CHECK_PICK(blanks, "pyt_b");
	rm_registry_release(&reg);
}

/* madengine's fixture: dummy, dummy2/model1, dummy2/model2, and "scope/tag" only inside its
 * scope, even when a model elsewhere carries the same words as tags. */
TEST(scopes)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	const char *top_ = "[" ENTRY("dummy", "\"dummies\", \"dummy_test_group_1\"") "," ENTRY(
	    "dummy2", "\"dummies\", \"dummy_group_1\", \"dummy2/model2\", \"model2\"") "]";
	const char *d2 = "[" ENTRY("model1", "\"dummies\", \"dummy_test_group_2\"") "," ENTRY(
	    "model2", "\"dummies\", \"dummy_test_group_2\"") "]";
	const char *d22 = "[" ENTRY("model2", "\"dummies\"") "]";

	CHECK(rm_registry_load_buffer(&reg, top_, strlen(top_), "models.json", NULL, ".", &err) ==
	      0);
	CHECK(rm_registry_load_buffer(&reg, d2, strlen(d2), "scripts/dummy2/models.json", "dummy2",
				      "scripts/dummy2", &err) == 0);
	CHECK(rm_registry_load_buffer(&reg, d22, strlen(d22), "scripts/dummy22/models.json",
				      "dummy22", "scripts/dummy22", &err) == 0);
	const char *scoped[] = {"dummy2/model2"};
	CHECK_PICK(scoped, "dummy2/model2");
	const char *scoped_tag[] = {"dummy2/dummies"};
	CHECK_PICK(scoped_tag, "dummy2/model1 dummy2/model2");
	const char *scoped_all[] = {"dummy22/all"};
	CHECK_PICK(scoped_all, "dummy22/model2");
	const char *groups[] = {"dummy_test_group_1", "dummy_test_group_2"};
	CHECK_PICK(groups, "dummy dummy2/model1 dummy2/model2");
	/* a name is a tag; a model selected by several tags and --tags runs once */
	const char *twice[] = {"dummy,dummies", "dummy", "dummy_test_group_1"};
	CHECK_PICK(twice, "dummy dummy2 dummy2/model1 dummy2/model2 dummy22/model2");
	/* "dummy2/model2:batch-size=32": madengine matches the full name, as here */
	rm_selection sel;
	const char *args[] = {"dummy2/model2:batch-size=32", "dummy2/model2:batch-size=32",
			      "dummy2/all"};
	char *got = pick(&reg, args, 3, &err, &sel);
	CHECK_STR(got, "dummy2/model1 dummy2/model2");
	free(got);
	if (sel.n == 2) {
		CHECK(sel.items[0].extra_args == NULL);
		CHECK_STR(sel.items[1].extra_args, " --batch-size 32"); /* once, not twice */
	}
	rm_selection_release(&sel);
	const char *two_args[] = {"dummy:a=1", "dummy:a=1:b=2", "dummy:b=2"};
	got = pick(&reg, two_args, 3, &err, &sel);
	CHECK_STR(got, "dummy");
	free(got);
	if (sel.n == 1)
		CHECK_STR(sel.items[0].extra_args, " --a 1 --a 1 --b 2"); /* whole pieces */
	rm_selection_release(&sel);
	/* more than one '/' is no scope: a plain name or tag */
	const char *deep[] = {"dummy2/model2/x"};
	got = pick(&reg, deep, 1, &err, NULL);
	free(got);
	CHECK(rm_starts_with(err.msg, "no model matches tag 'dummy2/model2/x'"));
	rm_registry_release(&reg);
}

TEST(args)
{
	rm_registry reg = {0};
	rm_selection sel;
	rm_error err = RM_ERROR_INIT;
	char *got;

	setup(&reg);
	const char *one[] = {"pyt_a:batch=8:steps = 10"};
	got = pick(&reg, one, 1, &err, &sel);
	CHECK_STR(got, "pyt_a");
	free(got);
	CHECK(sel.n == 1);
	if (sel.n == 1) {
		CHECK_STR(sel.items[0].extra_args, " --batch 8 --steps 10");
		/* The registry's own args are untouched. */
		CHECK_STR(sel.items[0].model->args, "--base 1");
	}
	rm_selection_release(&sel);
	CHECK(sel.n == 0 && sel.items == NULL);
	rm_selection_release(&sel);
	rm_selection_release(NULL);

	const char *two[] = {"pyt_a:x=1", "pyt:y=2:flag::", "tf_c"};
	got = pick(&reg, two, 3, &err, &sel);
	CHECK_STR(got, "pyt_a pyt_b tf_c");
	free(got);
	CHECK(sel.n == 3);
	if (sel.n == 3) {
		CHECK_STR(sel.items[0].extra_args, " --x 1 --y 2 --flag");
		CHECK_STR(sel.items[1].extra_args, " --y 2 --flag");
		CHECK(sel.items[2].extra_args == NULL);
	}
	rm_selection_release(&sel);
	rm_registry_release(&reg);
}

TEST(errors)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	char *got;

	setup(&reg);
	const char *none[] = {"nope"};
	got = pick(&reg, none, 1, &err, NULL);
	free(got);
	CHECK(err.kind == RM_ERR_INPUT);
	CHECK_STR(err.msg,
		  "no model matches tag 'nope'; run 'run_models list' to see the models and "
		  "their tags");

	const char *some[] = {"nope,pyt", "zz:k=v", "nope", "tf/training", ":k=v"};
	got = pick(&reg, some, 5, &err, NULL);
	free(got);
	CHECK_STR(err.msg, "no model matches tags 'nope', 'zz:k=v', 'tf/training', ':k=v'; run "
			   "'run_models list' to see the models and their tags");

	got = pick(&reg, NULL, 0, &err, NULL);
	free(got);
	CHECK(err.kind == RM_ERR_USAGE);
	CHECK(rm_starts_with(err.msg, "no tags given"));
	const char *empty[] = {" , ", ""};
	got = pick(&reg, empty, 2, &err, NULL);
	free(got);
	CHECK(rm_starts_with(err.msg, "no tags given"));
	rm_registry_release(&reg);

	/* An empty registry has nothing for "all" to match either. */
	rm_registry empty_reg = {0};
	const char *all[] = {"all"};
	rm_selection sel;
	CHECK(rm_select(&empty_reg, all, 1, &sel, &err) < 0);
	CHECK(rm_starts_with(err.msg, "no model matches tag 'all'"));
}
