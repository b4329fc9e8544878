/*
 * Fuzzes the YAML reader used for --additional-context-file: any input must give either a
 * JSON value or an error naming the source, and never crash, leak or recurse without bound.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rm/util.h"
#include "rm/context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_error err = RM_ERROR_INIT;
	json_t *v = rm_yaml_to_json((const char *)data, size, "fuzz.yaml", &err);

	if (!v) {
		if (err.kind == RM_ERR_NONE || strncmp(err.msg, "'fuzz.yaml'", 11) != 0)
			abort();
		return 0;
	}
	/* Whatever comes out must be JSON that jansson can write and read back unchanged. */
	char *s = json_dumps(v, JSON_ENCODE_ANY);
	if (!s)
		abort();
	json_t *back = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!back || !json_equal(v, back))
		abort();
	json_decref(back);
	free(s);
	json_decref(v);
	return 0;
}
