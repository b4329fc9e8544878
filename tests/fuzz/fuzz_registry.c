/*
 * Fuzzes the registry loader, tag selection over whatever loaded, the Python-dict parser
 * (CONTEXT lines, --additional-context) and image-name sanitising with the same input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rm/context.h"
#include "rm/registry.h"
#include "rm/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rm_registry reg = {0};
	rm_error err = RM_ERROR_INIT;
	char *text = rm_xmalloc(size + 1);
	json_t *dict;
	char *image;

	memcpy(text, data, size);
	text[size] = '\0';

	if (rm_registry_load_buffer(&reg, text, size, "fuzz/models.json", NULL, ".", &err) == 0) {
		/* The same file again as a per-folder registry: new names, no duplicates. */
		rm_registry_load_buffer(&reg, text, size, "scripts/fz/models.json", "fz",
					"scripts/fz", &err);
		if (reg.n) {
			const char *exprs[] = {"all", "fz/all,pyt:k=v",
					       reg.models[0].tags[0] ? reg.models[0].tags[0]
								     : reg.models[0].name};
			rm_selection sel;
			if (rm_select(&reg, exprs, 3, &sel, &err) == 0)
				rm_selection_release(&sel);
			image = rm_image_name(reg.models[0].name, reg.models[0].dockerfile);
			free(image);
		}
	}
	rm_registry_release(&reg);

	dict = rm_pydict_parse(text, &err);
	json_decref(dict);

	/* Tag expressions are user text too. */
	{
		const char *exprs[] = {text};
		rm_selection sel;
		if (rm_select(&reg, exprs, 1, &sel, &err) == 0)
			rm_selection_release(&sel);
	}
	image = rm_image_name(text, text);
	free(image);
	free(text);
	return 0;
}
