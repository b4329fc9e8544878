/* Configurations: the perf.csv cell and back, labels, keys, MAD's cells. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rm/config.h"

TEST(cell)
{
	rm_config c = RM_CONFIG_INIT, back = RM_CONFIG_INIT;
	char *text, *label, *name;

	text = rm_config_text(&c);
	CHECK(!strcmp(text, ""));
	free(text);
	rm_config_set(&c, "batch_size", "8");
	rm_config_set(&c, "env.NCCL_MIN_NCHANNELS", "16");
	rm_config_set(&c, "precision", "bf16");
	rm_config_set(&c, "batch_size", "16"); /* replaced, in place */
	text = rm_config_text(&c);
	CHECK(!strcmp(text, "{\"batch_size\":\"16\",\"env.NCCL_MIN_NCHANNELS\":\"16\","
			    "\"precision\":\"bf16\"}"));
	CHECK(rm_config_parse(&back, text) == 0 && back.n == 3);
	CHECK(!strcmp(rm_config_get(&back, "precision"), "bf16"));
	CHECK(!strcmp(back.p[0].name, "batch_size")); /* order kept */
	label = rm_config_label(&c);
	CHECK(!strcmp(label, "batch_size=16,env.NCCL_MIN_NCHANNELS=16,precision=bf16"));
	name = rm_config_name("grid", &c);
	CHECK(!strcmp(name, "grid[batch_size=16,env.NCCL_MIN_NCHANNELS=16,precision=bf16]"));
	free(name);
	name = rm_config_name("grid", NULL);
	CHECK(!strcmp(name, "grid"));
	CHECK(rm_config_parse(&back, "[1]") < 0 && rm_config_parse(&back, "not json") < 0);
	rm_config_release(&back);
	CHECK(rm_config_parse(&back, "{\"bs\": 8, \"on\": true}") == 0);
	CHECK(!strcmp(rm_config_get(&back, "bs"), "8") &&
	      !strcmp(rm_config_get(&back, "on"), "true"));
	free(name);
	free(label);
	free(text);
	rm_config_release(&c);
	rm_config_release(&back);
}

TEST(key)
{
	rm_config a = RM_CONFIG_INIT, b = RM_CONFIG_INIT;
	char ka[RM_CONFIG_KEY_LEN + 1], kb[RM_CONFIG_KEY_LEN + 1];

	/* Stable: the same pairs in any order give the same key, on every host. */
	rm_config_set(&a, "model", "m");
	rm_config_set(&a, "tunableop", "on");
	rm_config_set(&b, "tunableop", "on");
	rm_config_set(&b, "model", "m");
	rm_config_key(&a, ka);
	rm_config_key(&b, kb);
	CHECK(strlen(ka) == RM_CONFIG_KEY_LEN && !strcmp(ka, kb));
	/* A key is in perf.csv files and databases: it must never change for the same pairs. */
	CHECK(!strcmp(ka, "62a100a835f6"));
	rm_config_set(&b, "tunableop", "off");
	rm_config_key(&b, kb);
	CHECK(strcmp(ka, kb));
	/* Names and values do not run into each other. */
	rm_config_release(&a);
	rm_config_release(&b);
	rm_config_set(&a, "a", "b=c");
	rm_config_set(&b, "a=b", "c");
	rm_config_key(&a, ka);
	rm_config_key(&b, kb);
	CHECK(strcmp(ka, kb));
	rm_config_release(&a);
	rm_config_release(&b);
}

TEST(mad_cells)
{
	rm_config c = RM_CONFIG_INIT;
	char *base;

	/* The full schema's sweep rows (scripts/vllm_dissag/parse_to_csv.py) */
	CHECK(rm_config_from_metric("tok/s (isl=1024 osl=1024 con=8)", &c) == 3);
	CHECK(!strcmp(rm_config_get(&c, "isl"), "1024") && !strcmp(rm_config_get(&c, "con"), "8"));
	base = rm_config_metric_base("tok/s (isl=1024 osl=1024 con=8)");
	CHECK(!strcmp(base, "tok/s"));
	free(base);
	rm_config_release(&c);
	/* NIAH rows, today's and the older spelling */
	CHECK(rm_config_from_metric("retrieval/10 (niah words=2000 seeds=3)", &c) == 2);
	CHECK(!strcmp(rm_config_get(&c, "words"), "2000"));
	rm_config_release(&c);
	CHECK(rm_config_from_metric("needles found /10 (NIAH ctx=20000 words)", &c) == 1);
	rm_config_release(&c);
	/* No cell: the agentic rows' parentheses, plain metrics, odd text */
	CHECK(rm_config_from_metric("tok/s total (agentic cc, 70/72 requests)", &c) == 0);
	CHECK(rm_config_from_metric("samples_per_second", &c) == 0);
	CHECK(rm_config_from_metric("(a=1)", &c) == 0 && rm_config_from_metric(")", &c) == 0);
	CHECK(rm_config_from_metric("x (=1 a= )", &c) == 0 && c.n == 0);
	base = rm_config_metric_base("tok/s total (agentic cc, 70/72 requests)");
	CHECK(!strcmp(base, "tok/s total (agentic cc, 70/72 requests)"));
	free(base);
	/* The narrow layout's columns */
	CHECK(rm_config_cell_column("max_concurrency") && rm_config_cell_column("inp"));
	CHECK(!rm_config_cell_column("performance") && !rm_config_cell_column("status"));
}
