/*
 * Which way each metric should go (src/results/direction.c): higher is better, lower is
 * better, or unknown (not judged), from the metric table or a model's own
 * "metric_direction" in models.json. A change's sign says whether the number went up or
 * down; the direction says whether that is better or worse (rm/gate.h).
 */
#ifndef RM_DIRECTION_H
#define RM_DIRECTION_H

#include "rm/util.h"

typedef struct json_t json_t;

typedef enum rm_direction {
	RM_DIR_UNKNOWN = 0,
	RM_DIR_HIGHER, /* higher is better: throughput, samples/s, tokens/s, TFLOP/s, FPS */
	RM_DIR_LOWER,  /* lower is better: time, latency, loss, ms, s */
} rm_direction;

const char *rm_direction_name(rm_direction d); /* "higher", "lower", "unknown" */

/*
 * The direction of a metric from its name and unit (either may be NULL) by the metric table
 * (docs/nightly.md): a rate (X/s, X per second, throughput, FPS, TFLOP/s) is higher-better;
 * a time (s, ms, seconds/step, latency, duration, time to train), a loss or a perplexity is
 * lower-better; anything else is unknown (the gate says so and does not judge it).
 */
rm_direction rm_direction_guess(const char *metric, const char *unit);

/* Per-model overrides: the models.json field "metric_direction", an object mapping a metric
 * name to "higher" or "lower", e.g. {"metric_direction": {"time_to_train": "lower"}}. */
typedef struct rm_direction_table rm_direction_table;

rm_direction_table *rm_direction_table_new(void);
void rm_direction_table_free(rm_direction_table *t);

/* Takes model's "metric_direction" field (absent: nothing to do). A bad value is an error
 * naming source, the model and the metric. */
int rm_direction_table_add_model(rm_direction_table *t, const char *model, const json_t *entry,
				 const char *source, rm_error *err);

/* Reads root/models.json and root/scripts/<dir>/models.json (models named "<dir>/<name>" as
 * the registry names them). Missing files are skipped. */
int rm_direction_table_load(rm_direction_table *t, const char *root, rm_error *err);

/*
 * The direction for a perf.csv row's model and metric: the model's override (a
 * multiple_results row "<model>_<name>" uses <model>'s), else the metric table. *why, when
 * not NULL, receives "models.json" or "metric table". t may be NULL.
 */
rm_direction rm_direction_lookup(const rm_direction_table *t, const char *model, const char *metric,
				 const char **why);

#endif
