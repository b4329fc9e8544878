/*
 * A run's configuration (src/report/config.c): the parameters it ran with, by name, and a
 * stable key derived from what changes its result. Every perf.csv row carries both, in the
 * columns `config` (the parameters as a JSON object of strings, in the order they were
 * given: {"batch_size":"8","precision":"bf16"}) and `config_key` (12 hex digits). The
 * history, the gate, accepted changes, references and reports keep one series per key, so
 * two configurations of one model are never compared (docs/nightly.md).
 *
 * The key is SHA-256 over the identity's name=value pairs, sorted by name: the runner's
 * identity is the model, its effective args, precision, TunableOp, GPU count and selection,
 * the environment variables the user or a sweep set, and the row's cell (below); a row
 * written before configurations existed has an empty key, and forms its own series.
 *
 * MAD's serving scripts sweep inside one run and write a row per cell: the cell in the
 * metric's text ("tok/s (isl=1024 osl=1024 con=8)") or, in their narrow layout, in columns
 * (inp, out, max_concurrency, ...). rm_config_from_metric and rm_config_cell_column read
 * both, so such cells are configurations with those dimensions.
 *
 * Ownership: an rm_config owns its strings; rm_config_release frees them.
 */
#ifndef RM_CONFIG_H
#define RM_CONFIG_H

#include <stddef.h>

#define RM_CONFIG_KEY_LEN 12

typedef struct rm_config_param {
	char *name, *value;
} rm_config_param;

typedef struct rm_config {
	rm_config_param *p; /* in the order they were set */
	size_t n;
} rm_config;

#define RM_CONFIG_INIT                                                                             \
	{                                                                                          \
		.p = NULL, .n = 0                                                                  \
	}

/* Sets name to value: replaces its value when name is there, else appends it. */
void rm_config_set(rm_config *c, const char *name, const char *value);
/* The value of name, or NULL. */
const char *rm_config_get(const rm_config *c, const char *name);
/* Appends every parameter of from that c does not name yet. */
void rm_config_merge(rm_config *c, const rm_config *from);
void rm_config_release(rm_config *c);

/* The `config` cell: a JSON object of the parameters in their order; "" when there are none.
 * Caller frees. */
char *rm_config_text(const rm_config *c);
/* Reads a `config` cell ("" or a JSON object; numbers and booleans are taken as JSON writes
 * them) into c, after what it holds. -1 when text is neither. */
int rm_config_parse(rm_config *c, const char *text);
/* "batch_size=8,precision=bf16": how reports name a configuration; "" when empty. Caller
 * frees. */
char *rm_config_label(const rm_config *c);
/* "model[batch_size=8,precision=bf16]", or model when c is empty. Caller frees. */
char *rm_config_name(const char *model, const rm_config *c);
/* The key of an identity: RM_CONFIG_KEY_LEN hex digits and a NUL into out. */
void rm_config_key(const rm_config *identity, char out[RM_CONFIG_KEY_LEN + 1]);

/* The cell a metric's text carries: the name=value words inside the parentheses it ends
 * with ("tok/s (isl=1024 osl=1024 con=8)", "retrieval/10 (niah words=2000 seeds=3)"),
 * appended to c. Returns how many it found. */
size_t rm_config_from_metric(const char *metric, rm_config *c);
/* The metric without its cell ("tok/s"); the metric itself when it carries none. Caller
 * frees. */
char *rm_config_metric_base(const char *metric);
/* Whether a results column (a multiple_results CSV's, or a foreign perf.csv's) names a
 * cell dimension of MAD's narrow layout: benchmark, inp, out, max_concurrency, tp, pp,
 * ep_backend, prefill_decode (and the run_vllm.py columns dtype, bs). */
int rm_config_cell_column(const char *name);

#endif
