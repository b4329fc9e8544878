/*
 * Closed sets of words (rm_choice), and the one of perf rows' status.
 */
#include <string.h>

#include "rm/util.h"

int rm_choice_parse(const rm_choice *set, const char *word, int *value)
{
	for (; word && set->name; set++)
		if (!strcmp(set->name, word)) {
			*value = set->value;
			return 0;
		}
	return -1;
}

const char *rm_choice_name(const rm_choice *set, int value)
{
	for (; set->name; set++)
		if (set->value == value)
			return set->name;
	return NULL;
}

char *rm_choice_list(const rm_choice *set, const char *quote, const char *sep, const char *last_sep)
{
	rm_buf b = RM_BUF_INIT((size_t)1 << 12);

	for (size_t i = 0; set[i].name; i++)
		rm_buf_addf(&b, "%s%s%s%s",
			    i == 0	      ? ""
			    : set[i + 1].name ? sep
					      : last_sep,
			    quote, set[i].name, quote);
	return rm_buf_detach(&b);
}

const rm_choice rm_status_words[] = {{"SUCCESS", RM_STATUS_SUCCESS},
				     {"FAILURE", RM_STATUS_FAILURE},
				     {"SKIPPED", RM_STATUS_SKIPPED},
				     {NULL, 0}};

const char *rm_status_name(rm_status s)
{
	return rm_choice_name(rm_status_words, (int)s);
}

rm_status rm_status_of(const char *word)
{
	int v;
	return rm_choice_parse(rm_status_words, word, &v) == 0 ? (rm_status)v : RM_STATUS_NONE;
}
