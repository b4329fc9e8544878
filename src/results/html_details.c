/*
 * The report's "Run details": what made the latest run (rm/provenance.h), a collapsed table
 * of its groups (image, driver and firmware, environment, arguments, host) per model, the
 * host's first. Its own piece, as the power column is: the page calls it once.
 */
#include <jansson.h>
#include <string.h>

#include "html_internal.h"
#include "rm/provenance.h"
#include "rm/text.h"
#include "rm/util.h"

static void details_group(rm_buf *out, const json_t *scope, const char *group)
{
	const json_t *vals = json_object_get(json_object_get(scope, "groups"), group), *v;
	const char *model = json_string_value(json_object_get(scope, "model"));
	const char *df = json_string_value(json_object_get(scope, "docker_file"));
	const char *name;

	json_object_foreach ((json_t *)vals, name, v) {
		rm_buf_addstr(out, "<tr><td>");
		rm_text_html(out, group);
		rm_buf_addstr(out, "</td><td>");
		rm_text_html(out, model && *model ? model : "(the host)");
		if (df && *df) {
			rm_buf_addstr(out, " [");
			rm_text_html(out, df);
			rm_buf_addstr(out, "]");
		}
		rm_buf_addstr(out, "</td><td>");
		rm_text_html(out, name);
		rm_buf_addstr(out, "</td><td><code>");
		rm_text_html(out, json_string_value(v) ? json_string_value(v) : "");
		rm_buf_addstr(out, "</code></td></tr>\n");
	}
}

void rm_results__html_details(rm_buf *out, const struct report *r)
{
	const json_t *prov = r->o->provenance, *scope;
	const char *key;

	if (!prov || !json_object_size(prov))
		return;
	rm_buf_addstr(out, "<details id=\"run-details\"><summary><h2>Run details</h2> (");
	rm_text_html(out, r->latest_id ? r->latest_id : "");
	rm_buf_addstr(out, ": what made it)</summary><table><tr><th>group</th><th>of</th>"
			   "<th>name</th><th>value</th></tr>\n");
	for (size_t g = 0; rm_provenance_groups[g]; g++) {
		if ((scope = json_object_get(prov, ""))) /* the host's first */
			details_group(out, scope, rm_provenance_groups[g]);
		json_object_foreach ((json_t *)prov, key, scope)
			if (*key)
				details_group(out, scope, rm_provenance_groups[g]);
	}
	rm_buf_addstr(out, "</table></details>\n");
}
