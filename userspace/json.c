// SPDX-License-Identifier: LGPL-2.1
/* json: the one JSON writer of the userspace tools; json.h says how. */
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"

void json_init(struct json *j, FILE *f, bool spaced)
{
	*j = (struct json){ .f = f, .spaced = spaced };
}

void json_string(FILE *f, const char *s)
{
	unsigned char c;

	fputc('"', f);
	for (; (c = *s); s++) {
		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

/* Before a key or a value: the comma and line break it needs, if any. */
static void json_sep(struct json *j)
{
	if (j->keyed) {		/* the value of the key just written */
		j->keyed = false;
		return;
	}
	if (!j->depth)
		return;
	if (j->lv[j->depth - 1].more)
		fputs(j->spaced && j->lv[j->depth - 1].indent < 0 ? ", " : ",",
		      j->f);
	if (j->lv[j->depth - 1].indent >= 0)
		fprintf(j->f, "\n%*s", j->lv[j->depth - 1].indent, "");
	j->lv[j->depth - 1].more = true;
}

void json_open(struct json *j, char open, int indent)
{
	json_sep(j);
	fputc(open, j->f);
	if (j->depth == JSON_MAX_DEPTH)	/* a bug: nested too deep */
		abort();
	j->lv[j->depth].close = open == '{' ? '}' : ']';
	j->lv[j->depth].more = false;
	j->lv[j->depth].indent = indent;
	j->depth++;
}

void json_close(struct json *j)
{
	int indent;

	if (!j->depth)	/* a bug: closed more than opened */
		abort();
	indent = j->lv[j->depth - 1].indent;
	j->depth--;
	if (indent >= 0 && j->lv[j->depth].more)
		fprintf(j->f, "\n%*s", indent >= 2 ? indent - 2 : 0, "");
	fputc(j->lv[j->depth].close, j->f);
}

void json_key(struct json *j, const char *key)
{
	json_sep(j);
	json_string(j->f, key);
	fputs(j->spaced ? ": " : ":", j->f);
	j->keyed = true;
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_sep(j);
	json_string(j->f, s);
}

void json_u64(struct json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_int(struct json *j, long long v)
{
	json_sep(j);
	fprintf(j->f, "%lld", v);
}

void json_bool(struct json *j, bool v)
{
	json_sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	json_sep(j);
	fputs("null", j->f);
}

void json_double(struct json *j, double v)
{
	json_sep(j);
	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", j->f);
	else
		fprintf(j->f, "%.3f", v);
}
