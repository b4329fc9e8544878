/*
 * The Markdown summary of a run (src/results/markdown.c): for the job's page
 * ($GITHUB_STEP_SUMMARY) and a file beside the run's.
 *
 * One of the outputs a CI job reads after a run (rm/suite.h's rm_nightly_finish makes them
 * all at the end of a run). Everything works from the run's perf.csv, so it can also be run
 * later on files alone (run_models report ci).
 */
#ifndef RM_MARKDOWN_H
#define RM_MARKDOWN_H

#include "rm/gate.h"
#include "rm/results.h"
#include "rm/util.h"

/*
 * A GitHub-flavoured Markdown summary: a headline with the counts, then a table of models,
 * status, value, baseline, change and verdict (one line per model and metric; failures with
 * their reason), then the regression rule. Appended to rm_buf out.
 */
int rm_summary_markdown(rm_buf *out, const char *title, const rm_results *run, const rm_gate *gate);

#endif
